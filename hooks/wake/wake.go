package wake

// Wake rules (docs/operating.md).
//
// Decisions:
//   - A rule runs at most once per push, however many of the push's refs
//     match it; rules run in file order, each independently.
//   - The child is detached: its own session (setsid, so its own process
//     group), standard input /dev/null, standard output and error appended to
//     <gitdir>/gitplus/log/wake-<id>.log, current directory the git
//     directory. The hook does not wait for it: a server that kills the
//     hook's process group when the request ends (gitkit) leaves it running.
//   - The child's environment is an allowlist of the hook's (wakeenv.go:
//     no key unless the rule says "key": "server"), without what describes
//     this push (GIT_DIR, the quarantine and object-directory variables,
//     GIT_PUSH_OPTION_*, GITPLUS_WAKE_RULE), plus GITPLUS_WAKE_RULE=<id> and
//     push.pushOption=gitplus-wake=<id> through GIT_CONFIG_COUNT/KEY/VALUE,
//     so every git push the verb makes carries the tag without the verb's
//     help (git drops configured options when a push names its own
//     --push-option, so verbs that pass options add the tag too: see
//     WakeTag). Other GIT_CONFIG_* entries are kept.
//   - Per-event rules: a rule whose run argv holds a placeholder —
//     {ref}, {event.id}, {event.type} or {event.<key>} for a top-level
//     string (or number, bool) of the event's JSON payload, e.g.
//     {event.pr} and {event.step} of queue.candidate — runs once per
//     matching event instead of once per push, with the placeholders
//     filled in (the runs start one after another, each detached). A
//     placeholder the event lacks skips that event (logged).
//   - A push carrying the push option gitplus-wake=<id> does not wake rule
//     <id>; it wakes every other matching rule, so a check's completion
//     (from a check-running rule) wakes the queue rule. Only git+'s own
//     pushes into "." carry it where it counts (the environment channel,
//     pushopts.go): sent by a client with `git push -o`, it skips nothing.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gitplus/gitplus/hooks/opstatus"
	"github.com/gitplus/gitplus/receive/gitio"
)

// WakeEnv is the environment variable naming the wake rule that started a
// process.
const WakeEnv = "GITPLUS_WAKE_RULE"

// WakeOptionPrefix starts the push option that tags a push made by a process a
// wake rule started.
const WakeOptionPrefix = "gitplus-wake="

// WakeTag returns the push option a verb should pass on its pushes, read
// through getenv (pass os.Getenv): "gitplus-wake=<id>" when the process runs
// for a wake rule, else "".
func WakeTag(getenv func(string) string) string {
	if id := getenv(WakeEnv); id != "" {
		return WakeOptionPrefix + id
	}
	return ""
}

// RefUpdate is one ref a push moved and the hub events it brought.
type RefUpdate struct {
	Ref      string
	Old, New string      // hex ids; zero id for creation/deletion
	Types    []string    // types of the new events (hub refs only)
	Events   []WakeEvent // the new events themselves (same order as Types)
}

// WakeEvent is what a per-event rule's placeholders are filled from.
type WakeEvent struct {
	ID, Type string
	Payload  json.RawMessage
}

var placeholderRE = regexp.MustCompile(`\{(ref|event\.[A-Za-z0-9_]+)\}`)

// PerEvent reports whether r runs once per matching event (its argv holds a
// placeholder).
func (r WakeRule) PerEvent() bool {
	for _, a := range r.Run {
		if placeholderRE.MatchString(a) {
			return true
		}
	}
	return false
}

// Expand returns r with its placeholders filled from event ev of ref, or an
// error naming the first placeholder ev cannot fill.
func (r WakeRule) Expand(ref string, ev WakeEvent) (WakeRule, error) {
	var fields map[string]any
	_ = json.Unmarshal(ev.Payload, &fields)
	var bad error
	out := r
	out.Name = r.ID() // the expanded argv must keep the rule's id
	out.Run = make([]string, len(r.Run))
	for i, a := range r.Run {
		out.Run[i] = placeholderRE.ReplaceAllStringFunc(a, func(m string) string {
			key := m[1 : len(m)-1]
			switch key {
			case "ref":
				return ref
			case "event.id":
				return ev.ID
			case "event.type":
				return ev.Type
			}
			switch v := fields[strings.TrimPrefix(key, "event.")].(type) {
			case string:
				return v
			case float64, bool:
				return fmt.Sprint(v)
			}
			if bad == nil {
				bad = fmt.Errorf("event %s (%s) has no string field for %s", ev.ID, ev.Type, m)
			}
			return m
		})
	}
	return out, bad
}

// MatchEvents returns, for a per-event rule, the events of ups that wake it
// with their refs.
func MatchEvents(r WakeRule, ups []RefUpdate) (refs []string, evs []WakeEvent) {
	for _, u := range ups {
		if ok, _ := path.Match(r.Ref, u.Ref); !ok {
			continue
		}
		for _, ev := range u.Events {
			for _, on := range r.On {
				if on == "*" || on == ev.Type {
					refs, evs = append(refs, u.Ref), append(evs, ev)
					break
				}
			}
		}
	}
	return refs, evs
}

// Match returns the rules a push wakes: each rule whose ref glob matches an
// updated ref that brought an event of a type in its "on" list ("*": any
// update), once, in file order, skipping the rules whose id is in skip.
func Match(rules []WakeRule, ups []RefUpdate, skip map[string]bool) []WakeRule {
	var out []WakeRule
	for _, r := range rules {
		if skip[r.ID()] {
			continue
		}
		if ruleWoken(r, ups) {
			out = append(out, r)
		}
	}
	return out
}

func ruleWoken(r WakeRule, ups []RefUpdate) bool {
	for _, u := range ups {
		if ok, _ := path.Match(r.Ref, u.Ref); !ok {
			continue
		}
		for _, on := range r.On {
			if on == "*" {
				return true
			}
			for _, t := range u.Types {
				if t == on {
					return true
				}
			}
		}
	}
	return false
}

// PushOptions reads every push option a push carried: those a push into "."
// by git+ hands over through GITPLUS_PUSH_OPTIONS (receive/gitio/pushenv.go),
// then those git hands a hook through GIT_PUSH_OPTION_COUNT and
// GIT_PUSH_OPTION_<n> (sent over the wire). Which of them git+ honours is
// HonouredOptions' answer (pushopts.go), not this list's.
func PushOptions(environ []string) []string {
	env := envMap(environ)
	var out []string
	if v := env[gitio.EnvPushOptions]; v != "" {
		out = strings.Split(v, "\n")
	}
	n, err := strconv.Atoi(env["GIT_PUSH_OPTION_COUNT"])
	if err != nil || n <= 0 {
		return out
	}
	for i := 0; i < n && i < 1000; i++ {
		out = append(out, env["GIT_PUSH_OPTION_"+strconv.Itoa(i)])
	}
	return out
}

// SkippedRules are the rule ids named by gitplus-wake= push options (of the
// options HonouredOptions takes: pushopts.go).
func SkippedRules(opts []string) map[string]bool {
	skip := map[string]bool{}
	for _, o := range opts {
		if id, ok := strings.CutPrefix(o, WakeOptionPrefix); ok {
			skip[id] = true
		}
	}
	return skip
}

func envMap(environ []string) map[string]string {
	m := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// ChildEnv is environ without what describes the push being received, plus
// extra GIT_CONFIG entries (key, value pairs) appended after the ones kept.
func ChildEnv(environ []string, config [][2]string, extra ...string) []string {
	env := envMap(environ)
	var kept [][2]string
	if n, err := strconv.Atoi(env["GIT_CONFIG_COUNT"]); err == nil {
		for i := 0; i < n && i < 1000; i++ {
			k, v := env["GIT_CONFIG_KEY_"+strconv.Itoa(i)], env["GIT_CONFIG_VALUE_"+strconv.Itoa(i)]
			if strings.EqualFold(k, "push.pushOption") {
				continue
			}
			kept = append(kept, [2]string{k, v})
		}
	}
	kept = append(kept, config...)
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "GIT_DIR", k == "GIT_QUARANTINE_PATH", k == "GIT_OBJECT_DIRECTORY",
			k == "GIT_ALTERNATE_OBJECT_DIRECTORIES", k == "GIT_PROTOCOL", k == WakeEnv,
			k == "GIT_WORK_TREE", k == "GIT_INDEX_FILE",
			strings.HasPrefix(k, "GIT_PUSH_OPTION_"), strings.HasPrefix(k, "GIT_CONFIG_KEY_"),
			strings.HasPrefix(k, "GIT_CONFIG_VALUE_"), k == "GIT_CONFIG_COUNT",
			// Who pushed (receive/pusher.go, pusherenv.go): the identity of
			// the push being received must not travel into the pushes a
			// child makes. A wake pass identifies itself; carrying
			// GIT_PUSH_CERT* over would make its own pushes present the outer
			// push's certificate (replayed nonce), and GITKIT_KEY,
			// GITPLUS_TOKEN_KEY or a host's GL_USER/REMOTE_USER would lend it
			// the identity of whoever's push woke it.
			strings.HasPrefix(k, "GIT_PUSH_CERT"), IsPusherVar(k),
			k == gitio.EnvPushOptions:
			continue
		}
		out = append(out, kv)
	}
	if len(kept) > 0 {
		out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(len(kept)))
		for i, c := range kept {
			out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, c[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, c[1]))
		}
	}
	return append(out, extra...)
}

// WakeCommand builds the command for rule r in gitDir: argv[0] "git+" is
// binary; the environment is environ adjusted as the package documentation
// says. Output and process attributes are the caller's.
func WakeCommand(gitDir, binary string, r WakeRule, environ []string) *exec.Cmd {
	argv := append([]string{}, r.Run...)
	if argv[0] == "git+" && binary != "" {
		argv[0] = binary
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = gitDir
	cmd.Env = wakeEnv(gitDir, r, environ)
	return cmd
}

// WakeLog is the log file of rule id under gitDir.
func WakeLog(gitDir, id string) string {
	return filepath.Join(gitDir, "gitplus", "log", "wake-"+id+".log")
}

// StartWake starts rule r detached (its own session) with its output
// appended to WakeLog and returns the child's pid without waiting for it.
// The child is `binary hook wake-run` (wakerun.go: it runs the rule,
// writes "=== <time> exit <status>" to the log and records the outcome),
// or, without a binary, `sh -c` running the rule and writing that line.
func StartWake(gitDir, binary string, r WakeRule, environ []string) (int, error) {
	logPath := WakeLog(gitDir, r.ID())
	f, err := OpenLog(logPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cmd := WakeCommand(gitDir, binary, r, environ)
	if binary != "" {
		// git+ supervises the run: the exit status goes to the log and the
		// outcome to the records queue show, the page and /metrics read
		// (hooks/opstatus/wakeoutcome.go).
		cmd.Args = append([]string{binary, "hook", "wake-run", r.ID()}, cmd.Args...)
		cmd.Path, cmd.Err = binary, nil
	} else {
		// A shell in front records the exit status in the log after the run.
		cmd.Args = append([]string{"sh", "-c", `st=0; "$@" </dev/null || st=$?; echo "=== $(date -u +%Y-%m-%dT%H:%M:%SZ) exit $st"`, "sh"}, cmd.Args...)
		if sh, err := exec.LookPath("sh"); err == nil {
			cmd.Path = sh
		} else {
			cmd.Path = "/bin/sh"
		}
		cmd.Err = nil
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	fmt.Fprintf(f, "=== %s wake %s: %s\n", time.Now().UTC().Format(time.RFC3339), r.ID(), strings.Join(r.Run, " "))
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(f, "=== could not start: %v\n", err)
		_ = opstatus.RecordWake(gitDir, outcomeOf(r.ID(), err, "", false)) // hooks/opstatus/wakeoutcome.go
		_ = opstatus.PublishStatus(gitDir)
		return 0, fmt.Errorf("starting wake rule %s (%s) in %s: %w", r.ID(), strings.Join(r.Run, " "), gitDir, err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	return pid, nil
}

// OpenLog opens (creating its directory) a log file for appending; a file
// over 4 MiB is renamed to <name>.old first.
func OpenLog(p string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("creating the log directory %s: %w", filepath.Dir(p), err)
	}
	if fi, err := os.Stat(p); err == nil && fi.Size() > 4<<20 {
		_ = os.Rename(p, p+".old")
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log %s: %w", p, err)
	}
	return f, nil
}
