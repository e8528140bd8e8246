package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/fixtures"
)

// The rewrite along a command path: flags go to the level that defines
// them, positionals after "--" at the last level.
func TestNormalizeArgsPath(t *testing.T) {
	leaf := &cli.Command{Name: "revoke", Flags: []cli.Flag{&cli.StringFlag{Name: "id"}, &cli.StringFlag{Name: "key"}}}
	list := &cli.Command{Name: "list", Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}}}
	token := &cli.Command{Name: "token", Subcommands: []*cli.Command{leaf, list}}
	member := hubGroup("member", "", token)
	run := &cli.Command{Name: "run", Flags: []cli.Flag{&cli.StringFlag{Name: "pr"}}}
	check := hubGroup("check", "", run)
	root := []cli.Flag{&cli.StringFlag{Name: "repo"}, &cli.StringFlag{Name: "key"}, &cli.BoolFlag{Name: "json"}}
	cmds := []*cli.Command{member, check}
	for _, c := range []struct{ in, want string }{
		{"member token revoke NAME --id ID", "member token revoke --id ID -- NAME"},
		{"member token revoke NAME --id=ID", "member token revoke --id=ID -- NAME"},
		// the nearest level that defines a flag takes it; a global one goes up
		{"member token revoke NAME --key K --repo R", "--repo R member token revoke --key K -- NAME"},
		{"--repo R member token list --json", "--repo R member token list --json"},
		{"member token list extra --json", "member token list --json -- extra"},
		// an unknown flag stays at the deepest level, without a value
		{"member token revoke NAME --nope V", "member token revoke --nope -- NAME V"},
		// "--" ends the flags; positionals after it stay as they are
		{"check run --pr P -- make test --pr x", "check run --pr P -- make test --pr x"},
		{"check run -- sh -c 'x'", "check run -- sh -c 'x'"},
		{"member token revoke -- -dash --id", "member token revoke -- -dash --id"},
		// a word after the first positional is a positional, not a subcommand
		{"member token revoke list", "member token revoke -- list"},
		// an unknown subcommand is left for the group to report
		{"member bogus --json", "--json member bogus"},
		{"member --help", "member --help"},
		{"member token revoke --help NAME", "member token revoke --help -- NAME"},
		{"", ""},
	} {
		got := strings.Join(normalizeArgs(root, cmds, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("normalizeArgs(%q) = %q, want %q", c.in, got, c.want)
		}
		// Rewriting again changes nothing.
		if again := strings.Join(normalizeArgs(root, cmds, strings.Fields(got)), " "); again != got {
			t.Errorf("normalizeArgs(%q) again = %q", got, again)
		}
	}
}

// readmeVerb is one verb line of README.md's reference, as arguments.
type readmeVerb struct {
	line        string
	path, pos   []string
	flags, tail []string
}

var (
	readmeRowRE  = regexp.MustCompile("^\\| `")
	backquotedRE = regexp.MustCompile("`([^`]+)`")
)

// splitTop splits s at sep outside brackets.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// usageTokens turns a usage line into the words of one way to call it: the
// first alternative of every a|b and [a|b], optional groups included, a
// "[-- ...]" pass-through group left out.
func usageTokens(s string) []string {
	var out []string
	for _, part := range splitTop(strings.TrimSpace(s), ' ') {
		switch {
		case part == "":
		case strings.HasPrefix(part, "[") && strings.HasSuffix(part, "]"):
			inner := part[1 : len(part)-1]
			if inner == "--" || strings.HasPrefix(inner, "-- ") {
				continue
			}
			out = append(out, usageTokens(splitTop(inner, '|')[0])...)
		default:
			out = append(out, splitTop(part, '|')[0])
		}
	}
	return out
}

// readmeVerbs reads every verb line of README.md's reference tables.
func readmeVerbs(t *testing.T, app *cli.App) []readmeVerb {
	text, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeVerb
	for _, row := range strings.Split(string(text), "\n") {
		if !readmeRowRE.MatchString(row) {
			continue
		}
		cell := row[:strings.Index(row[1:], "` | ")+2] // the first column
		for _, m := range backquotedRE.FindAllStringSubmatch(cell, -1) {
			line := strings.NewReplacer(`\|`, "|", "…", "").Replace(m[1])
			toks := usageTokens(line)
			if len(toks) == 0 || findSub(app.Commands, toks[0]) == nil {
				continue // a continuation ("/ `--resolve THREAD`") or not a verb
			}
			v := readmeVerb{line: line}
			flags, subs := app.Flags, app.Commands
			var leafFlags []cli.Flag
			i := 0
			for ; i < len(toks); i++ {
				s := findSub(subs, toks[i])
				if s == nil {
					break
				}
				v.path = append(v.path, toks[i])
				leafFlags, subs = argLevel(s)
			}
			for ; i < len(toks); i++ {
				tok := toks[i]
				if tok == "--" {
					v.tail = []string{"true"}
					break
				}
				if !isFlagArg(tok) {
					v.pos = append(v.pos, placeholderValue(t, tok))
					continue
				}
				name := strings.TrimLeft(tok, "-")
				f := findFlag(leafFlags, name)
				if f == nil {
					f = findFlag(flags, name)
				}
				v.flags = append(v.flags, tok)
				if f != nil && takesValue(f) {
					if i+1 < len(toks) && !isFlagArg(toks[i+1]) && toks[i+1] != "--" {
						i++ // the README's placeholder for the value
					}
					v.flags = append(v.flags, flagValue(name))
				}
			}
			out = append(out, v)
		}
	}
	return out
}

const testUUID = "01890a5d-ac96-774b-bcce-b302099a8057"

func placeholderValue(t *testing.T, p string) string {
	switch p {
	case "ID", "PR_ID":
		return testUUID
	case "NAME":
		return "dev"
	case "REV", "OURS", "THEIRS":
		return "HEAD"
	case "DIR":
		return filepath.Join(t.TempDir(), "new.git")
	case "FILE":
		return "-"
	}
	return "x"
}

func flagValue(name string) string {
	if v, ok := map[string]string{
		"conclusion": "success", "priority": "high", "since": "2026-01-01", "cap": "hub.pr", "add-cap": "hub.pr",
		"remove-cap": "hub.pr", "target": "main", "base": "main", "head": "HEAD", "rev": "HEAD", "branch": "pr/x",
		"timeout": "1s", "below-wait": "1s", "lease": "1s", "depth": "1", "retries": "1", "max-rounds": "1",
		"name": "ci", "key": "/nonexistent/key", "id": "abc123", "queue": testUUID, "pr": testUUID, "initial-branch": "main",
		"ref": "refs/heads/main", "url": "http://127.0.0.1:1/", "remote": "origin", "jobs": "1", "poll": "1s", "listen": "127.0.0.1:0", "secret": "s",
		"sandbox": "best-effort", "pass-env": "HOME", "cache": "/nonexistent/cache", "read": "/usr", "run-as": "nobody",
	}[name]; ok {
		return v
	}
	return "x"
}

// Every verb line of README.md's reference that has flags works with the
// flags after the positional arguments: the same outcome as with the flags
// first, and no usage or flag error. The verbs run against a repository that
// does not exist, so each fails (exit 1) once its command line has been
// read. serve is left out: it would serve.
func TestREADMEVerbsFlagsAfterArguments(t *testing.T) {
	verbs := readmeVerbs(t, newApp())
	bin := fixtures.Binary(t)
	env := append(fixtures.GitEnv(t.TempDir()), "GITPLUS_KEY=", "SSH_AUTH_SOCK=")
	global := []string{"--repo", filepath.Join(t.TempDir(), "nonexistent.git")}
	tested := 0
	for _, v := range verbs {
		if len(v.flags) == 0 || v.path[0] == "serve" {
			continue
		}
		tested++
		v := v
		t.Run(v.line, func(t *testing.T) {
			t.Parallel()
			gp := func(args ...string) (string, int) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, append(append([]string{}, global...), args...)...)
				cmd.Env, cmd.Dir = env, t.TempDir()
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				var ee *exec.ExitError
				if err != nil && !errors.As(err, &ee) {
					t.Fatalf("git+ %s: %v", strings.Join(args, " "), err)
				}
				return stderr.String(), cmd.ProcessState.ExitCode()
			}
			tail := []string{}
			if len(v.tail) > 0 {
				tail = append([]string{"--"}, v.tail...)
			}
			after := append(append(append(append([]string{}, v.path...), v.pos...), v.flags...), tail...)
			before := append(append(append(append([]string{}, v.path...), v.flags...), v.pos...), tail...)
			errA, codeA := gp(after...)
			errB, codeB := gp(before...)
			for _, bad := range []string{"flag provided but not defined", "flag needs an argument", "invalid value", "usage:", "Incorrect Usage"} {
				if strings.Contains(errA, bad) {
					t.Errorf("git+ %s: %q:\n%s", strings.Join(after, " "), bad, errA)
				}
			}
			if codeA == 2 {
				t.Errorf("git+ %s: exit 2 (usage)\n%s", strings.Join(after, " "), errA)
			}
			if codeA != codeB || errA != errB {
				t.Errorf("flags after the arguments: exit %d\n%s\nflags first (git+ %s): exit %d\n%s", codeA, errA, strings.Join(before, " "), codeB, errB)
			}
		})
	}
	if tested < 30 {
		t.Fatalf("only %d verb lines of README.md with flags: the reference's format changed?", tested)
	}
}

// A single leaked token is revoked as documented (`member token revoke NAME
// --id ID`), and `member token list --json` prints JSON.
func TestMemberTokenRevokeIDAndListJSON(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"source.push"}})
	list := func() []map[string]string {
		out := w.mustGP("", w.origin, "", "member", "token", "list", "--json")
		var v struct{ Tokens []map[string]string }
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("member token list --json: %v\n%s", err, out)
		}
		return v.Tokens
	}
	w.mustGP("", w.origin, "", "member", "token", "issue", "dev")
	w.mustGP("", w.origin, "", "member", "token", "issue", "dev")
	toks := list()
	if len(toks) != 2 || toks[0]["name"] != "dev" || toks[0]["id"] == "" || toks[0]["created"] == "" {
		t.Fatalf("member token list --json: %v", toks)
	}
	w.mustGP("", w.origin, "", "member", "token", "revoke", "dev", "--id", toks[0]["id"])
	if left := list(); len(left) != 1 || left[0]["id"] != toks[1]["id"] {
		t.Fatalf("after revoking %s: %v", toks[0]["id"], left)
	}
}
