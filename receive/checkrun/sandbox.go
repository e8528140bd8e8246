package checkrun

// How a check command runs (docs/ci.md): the sandbox around it, its
// environment and what it may touch, composed here for receive/sandbox.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/gitplus/gitplus/receive/repo"
	"github.com/gitplus/gitplus/receive/sandbox"
)

// Sandbox says how the command is confined (--sandbox, --pass-env,
// --cache, --read, --run-as, --confine-reads).
type Sandbox struct {
	Mode    sandbox.Mode // "": best-effort
	PassEnv []string     // variables of Environ the command gets as well
	Caches  []sandbox.Cache
	// Reads are files and directories the command may also read and run
	// (a CI script's directory, a toolchain outside the system trees).
	Reads []string
	// RunAs, a user name, runs the command as that user (the worker must
	// run as root).
	RunAs string
	// ConfineReads confines a lane candidate's reads of its checkout to
	// its partition's inputs (confine.go); it needs Landlock.
	ConfineReads bool
	// Deny are paths no grant may reach, besides those Run always keeps
	// out (the signing key's file, the repository, ~/.ssh, the agent's
	// socket): the worker adds its clone.
	Deny []string
	// Environ is the worker's environment (nil: os.Environ()).
	Environ []string
	// Quiet: the caller has already said how runs are confined (the
	// worker's first line), so Run does not say it again.
	Quiet bool
}

// confined is what Run decided, once for all attempts.
type confined struct {
	conf    sandbox.Confinement
	cred    *syscall.Credential
	user    string
	environ []string
	hidden  []string // no grant may reach these (Policy.Without)
	noWrite []string // nor write these
}

// prepare decides the run's confinement (sandbox.ErrUnconfinable under
// --sandbox required on a kernel without Landlock: before anything is
// recorded), makes this process non-dumpable for a confined run, and
// says in one line what is confined.
func (o Options) prepare(s *repo.Signing) (*confined, error) {
	sb := o.Sandbox
	c := &confined{environ: sb.Environ}
	if c.environ == nil {
		c.environ = os.Environ()
	}
	var err error
	if c.conf, err = sb.Decide(); err != nil { // confine.go
		return nil, err
	}
	if sb.RunAs != "" {
		if c.cred, err = sandbox.RunAs(sb.RunAs); err != nil {
			return nil, err
		}
		c.user = sb.RunAs
	}
	if !c.conf.Off {
		// The key lives in this process's memory and its path in its
		// command line; a command running as the same user must not read
		// /proc/<pid>/mem or environ (docs/ci.md).
		if err := sandbox.ProtectSelf(); err != nil {
			return nil, fmt.Errorf("making the worker non-dumpable: %w", err)
		}
	}
	// Out of reach whatever the flags say: the signing key's file, the
	// repository (the worker's clone), the worker's home (~/.ssh, and the
	// credentials other tools keep there), the agent's socket. Read and
	// run grants beneath the home stay (a toolchain there), and writable
	// ones (a cache there), but for ~/.ssh.
	c.noWrite = append(append(c.noWrite, sb.Deny...), s.Repo.GitDir)
	if k := s.Key.Source; k != "" && k != "ssh-agent" {
		c.noWrite = append(c.noWrite, k)
	}
	for _, kv := range c.environ {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case v == "":
		case k == "HOME":
			c.hidden = append(c.hidden, v)
			c.noWrite = append(c.noWrite, filepath.Join(v, ".ssh"))
		case k == "SSH_AUTH_SOCK" || k == "GITPLUS_KEY":
			c.noWrite = append(c.noWrite, v)
		}
	}
	c.hidden = append(c.hidden, c.noWrite...)
	if !sb.Quiet {
		fmt.Fprintf(o.Log, "check %s: %s\n", o.Name, sb.Describe(c.conf))
	}
	return c, nil
}

func cacheDirs(cs []sandbox.Cache) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Dir)
	}
	return out
}

// checkVars are the check's own variables (docs/ci.md); how is how the
// command runs (record).
func checkVars(o Options, base string, attempt int, how string) []string {
	return []string{
		"CI=true",
		"GITPLUS_CHECK_PR=" + o.PR,
		"GITPLUS_CHECK_REV=" + o.Rev,
		"GITPLUS_CHECK_NAME=" + o.Name,
		"GITPLUS_CHECK_BASE=" + base,
		"GITPLUS_CHECK_ATTEMPT=" + strconv.Itoa(attempt),
		"GITPLUS_CHECK_SANDBOX=" + how,
	}
}

// command is the sandboxed command of one attempt: tree is the checkout,
// scratch the fresh directory of HOME and TMPDIR, vars the check's own
// variables, reads the files of the run it may read besides (the lane's
// changed paths, partition.go). inputs, when not nil, confines the
// command's reads of the checkout to those paths of it (confine.go): the
// rest of the checkout is write-only and nothing of a git directory is
// granted.
func (c *confined) command(o Options, tree, scratch string, vars, reads, inputs []string) (sandbox.Command, error) {
	uid, gid := -1, -1
	if c.cred != nil {
		uid, gid = int(c.cred.Uid), int(c.cred.Gid)
	}
	cmd := sandbox.Command{Argv: o.Argv, Dir: tree, Confinement: c.conf, Credential: c.cred}
	if !c.conf.Off {
		if err := sandbox.MakeScratch(scratch, -1, -1); err != nil {
			return cmd, err
		}
	}
	if uid != -1 {
		// The run's directory, its checkout and scratch directory are the
		// user's: git refuses a repository its user does not own.
		if err := sandbox.Chown(filepath.Dir(tree), uid, gid); err != nil {
			return cmd, err
		}
	}
	if c.conf.Off {
		cmd.Env = append(append([]string{}, c.environ...), vars...)
		return cmd, nil
	}
	for _, ch := range o.Sandbox.Caches {
		if _, err := os.Stat(ch.Dir); err != nil {
			if err := os.MkdirAll(ch.Dir, 0o755); err != nil {
				return cmd, fmt.Errorf("creating the cache %s: %w", ch.Dir, err)
			}
			if uid != -1 {
				if err := sandbox.Chown(ch.Dir, uid, gid); err != nil {
					return cmd, err
				}
			}
		}
		if ch.Env != "" {
			vars = append(vars, ch.Env+"="+ch.Dir)
		}
	}
	cmd.Env = sandbox.Env(c.environ, c.user, scratch, o.Sandbox.PassEnv, vars)
	if !c.conf.Landlock() {
		return cmd, nil
	}
	path := ""
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	box := sandbox.Policy{
		Write:  []string{tree, scratch},
		Caches: cacheDirs(o.Sandbox.Caches),
		Exec:   o.Sandbox.Reads,
		Read:   append(borrowedObjects(filepath.Join(tree, ".git", "objects")), reads...),
	}
	if inputs != nil {
		box.Write, box.WriteOnly, box.Read = append(slices.Clone(inputs), scratch), []string{tree}, reads
	}
	p := sandbox.System(path).Merge(box)
	if filepath.IsAbs(o.Argv[0]) {
		p.Exec = append(p.Exec, o.Argv[0]) // the operator's own command, wherever it lives
	}
	var dropped []string
	cmd.Policy, dropped = p.Without(c.hidden, c.noWrite)
	for _, d := range dropped {
		fmt.Fprintf(o.Log, "check %s: not letting the command reach %s: it holds, or lies in, what must stay out of reach (the signing key, the worker's home, ~/.ssh, the agent's socket, the worker's repository)\n", o.Name, d)
	}
	return cmd, nil
}

// borrowedObjects are the object directories a repository's objects
// directory borrows through objects/info/alternates, followed from one to
// the next: the command reads them (`git log` in its checkout) and writes
// none.
func borrowedObjects(objects string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		data, err := os.ReadFile(filepath.Join(dir, "info", "alternates"))
		if err != nil || depth > 5 {
			return
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if !filepath.IsAbs(line) {
				line = filepath.Join(dir, line)
			}
			line = filepath.Clean(line)
			if seen[line] {
				continue
			}
			seen[line] = true
			out = append(out, line)
			walk(line, depth+1)
		}
	}
	walk(objects, 0)
	return out
}
