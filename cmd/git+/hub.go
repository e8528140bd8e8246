package main

// Shared context of the hub verbs (init, member, rules, pr, whoami): finding
// the repository, the signing key, reading refs/hub/trust and pull requests,
// and appending events after judging them locally.
//
// Decisions (see README.md, Reference):
//   - Flags may follow positional arguments (`git+ pr show ID --json`): the
//     hub verbs reorder their own arguments before urfave/cli parses them,
//     which stops at the first positional otherwise.
//   - The global --key (or $GITPLUS_KEY, then ssh-agent) signs; `member add
//     --key` names the member's public key, so the signing key goes before the
//     verb or in $GITPLUS_KEY.
//   - Trust is read with generous ceilings (the CLI is a client: the boundary
//     enforces the rules' ceilings); pull requests with the rules' ceilings.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/urfave/cli/v2"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
)

// ---- command construction -------------------------------------------------

// remoteFlag names where hub events are fetched from and pushed to.
func remoteFlag() cli.Flag {
	return &cli.StringFlag{Name: "remote", Usage: "remote holding the hub refs (default: . in a bare repository; in a clone the current branch's upstream remote, then origin)"}
}

// hubVerb makes cmd accept flags after its positional arguments: the outer
// command skips urfave/cli's parsing, reorders the arguments (flags first)
// and runs cmd on them.
func hubVerb(cmd *cli.Command) *cli.Command {
	return &cli.Command{
		Name:            cmd.Name,
		Usage:           cmd.Usage,
		ArgsUsage:       cmd.ArgsUsage,
		Description:     cmd.Description + flagHelp(cmd),
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			parent := cli.NewContext(c.App, nil, c)
			parent.Command = &cli.Command{Name: cmd.Name, Subcommands: []*cli.Command{cmd}, HelpName: "git+"}
			return runLeaf(parent, cmd, c.Args().Slice())
		},
	}
}

// hubGroup makes a verb with subcommands (member, rules, pr) whose
// subcommands accept flags after their positional arguments.
func hubGroup(name, usage string, subs ...*cli.Command) *cli.Command {
	var desc strings.Builder
	fmt.Fprintf(&desc, "Subcommands (git+ %s SUBCOMMAND --help for their flags):\n", name)
	for _, s := range subs {
		fmt.Fprintf(&desc, "   %-16s %s\n", strings.TrimSpace(s.Name+" "+s.ArgsUsage), s.Usage)
	}
	group := &cli.Command{Name: name, Usage: usage, Description: desc.String(), SkipFlagParsing: true}
	group.Action = func(c *cli.Context) error {
		args := c.Args().Slice()
		if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
			fmt.Fprintf(c.App.Writer, "usage: git+ %s SUBCOMMAND [ARGS] [FLAGS]\n\n%s", name, desc.String())
			if len(args) == 0 {
				return fail(2, errors.New(""))
			}
			return nil
		}
		for _, s := range subs {
			if s.HasName(args[0]) {
				// A parent context whose command lists the subcommands, so
				// `--help` on a subcommand finds its topic.
				parent := cli.NewContext(c.App, nil, c)
				parent.Command = &cli.Command{Name: name, Subcommands: subs, HelpName: "git+ " + name}
				return runLeaf(parent, s, args[1:])
			}
		}
		return usageErr("git+ %s: unknown subcommand %q; run `git+ %s help`", name, args[0], name)
	}
	return group
}

func runLeaf(parent *cli.Context, cmd *cli.Command, args []string) error {
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error { return fail(2, err) }
	}
	if cmd.HelpName == "" {
		cmd.HelpName = parent.Command.HelpName + " " + cmd.Name
	}
	withJSON(cmd, strings.TrimPrefix(cmd.HelpName, "git+ "))
	ctx := cli.NewContext(parent.App, nil, parent)
	ctx.Command = cmd
	return cmd.Run(ctx, append([]string{cmd.Name}, reorderArgs(cmd.Flags, args)...)...)
}

func flagHelp(cmd *cli.Command) string {
	var b strings.Builder
	if len(cmd.Flags) > 0 {
		b.WriteString("\n\nFlags:\n")
		for _, f := range cmd.Flags {
			fmt.Fprintf(&b, "   %s\n", f.String())
		}
	}
	return b.String()
}

// reorderArgs puts flags (with their values) before positional arguments,
// ending the flags with "--" so a positional starting with '-' stays one.
func reorderArgs(flags []cli.Flag, args []string) []string {
	takesValue := map[string]bool{"help": false, "h": false}
	for _, f := range flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var fl, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		fl = append(fl, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue[name] && i+1 < len(args) {
			i++
			fl = append(fl, args[i])
		}
	}
	return append(append(fl, "--"), pos...)
}

// wantJSON reports whether --json was given before or after the verb.
func wantJSON(c *cli.Context) bool {
	for _, x := range c.Lineage() {
		if x.Bool("json") {
			return true
		}
	}
	return false
}

// rootString reads a global flag (before the verb), even when the verb has
// a flag of the same name (member add --key).
func rootString(c *cli.Context, name string) string {
	// The root context is the outermost one with a command (urfave/cli
	// puts an empty context above it).
	l := c.Lineage()
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].Command != nil {
			return l[i].String(name)
		}
	}
	return ""
}

func printJSON(c *cli.Context, v any) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ---- repository -----------------------------------------------------------

// hubRepo is the repository the hub verbs work on.
type hubRepo struct {
	GitDir string // absolute git directory
	Bare   bool
	Remote string // "." or the remote the hub refs live on
	// noRemote: a clone with no --remote, no upstream and no origin.
	noRemote bool
	store    *filesystem.Storage        // refs (and init's one object)
	objs     storer.EncodedObjectStorer // event reads: package receive's pack reader
}

// gitOut runs git with --git-dir and returns its trimmed output; the error
// carries git's stderr.
func gitOut(gitDir string, args ...string) (string, error) {
	if gitDir != "" {
		args = append([]string{"--git-dir=" + gitDir}, args...)
	}
	cmd := exec.Command("git", args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// findGitDir resolves dir (a bare repository, a work tree or its .git; ""
// means discover from the current directory as git does).
func findGitDir(dir string) (gitDir string, bare bool, err error) {
	args := []string{"rev-parse", "--absolute-git-dir", "--is-bare-repository"}
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := gitOut("", args...)
	if err != nil {
		where := dir
		if where == "" {
			where, _ = os.Getwd()
		}
		return "", false, fmt.Errorf("%s is not a git repository (pass --repo DIR or run inside one): %w", where, err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 2 {
		return "", false, fmt.Errorf("git rev-parse in %s: unexpected output %q", dir, out)
	}
	return lines[0], lines[1] == "true", nil
}

// openHub opens the repository named by --repo (or the current one),
// settles the remote (--remote) and, for a remote other than ".", fetches its
// hub refs so reads and appends start from the remote's events.
func openHub(c *cli.Context) (*hubRepo, error) {
	gitDir, bare, err := findGitDir(rootString(c, "repo"))
	if err != nil {
		return nil, err
	}
	key := gitDir + "\x00" + c.String("remote")
	if h, ok := openedHubs[key]; ok {
		return h, nil
	}
	h := &hubRepo{GitDir: gitDir, Bare: bare, Remote: c.String("remote")}
	if h.Remote == "" {
		h.Remote, h.noRemote = defaultRemote(gitDir, bare)
	}
	if h.Remote != "." {
		if err := hubrefs.Fetch(context.Background(), gitDir, h.Remote); err != nil {
			return nil, fmt.Errorf("fetching hub refs from %s into %s (check the remote, or pass --remote .): %w", h.Remote, gitDir, err)
		}
	}
	if err := h.open(); err != nil {
		return nil, err
	}
	openedHubs[key] = h
	return h, nil
}

// openedHubs caches openHub per git directory and --remote: resolving an
// abbreviated id opens (and fetches) the repository before the verb does,
// and the verb must not fetch a second time. One process runs one verb.
var openedHubs = map[string]*hubRepo{}

// defaultRemote chooses the remote a verb without --remote reads and writes,
// as git chooses where to push (docs/cli.md, "Which remote"): "." in a bare
// repository (it is the server); in a clone, the current branch's upstream
// remote (branch.<name>.remote), then origin. noRemote is true when a clone
// has neither: readers then read the clone's own refs, writers refuse.
func defaultRemote(gitDir string, bare bool) (remote string, noRemote bool) {
	if bare {
		return ".", false
	}
	if b, err := gitOut(gitDir, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && b != "" {
		if r, err := gitOut(gitDir, "config", "--get", "branch."+b+".remote"); err == nil && r != "" {
			return r, false
		}
	}
	if _, err := gitOut(gitDir, "config", "--get", "remote.origin.url"); err == nil {
		return "origin", false
	}
	return ".", true
}

// ErrNoRemote is a writing verb run in a clone that has no remote to write
// to: writing into the clone's own refs would be seen by nobody.
var ErrNoRemote = errors.New("no remote to write to")

func (h *hubRepo) open() error {
	h.store = filesystem.NewStorageWithOptions(osfs.New(h.GitDir), cache.NewObjectLRUDefault(), filesystem.Options{})
	objs, err := receive.OpenStore(h.GitDir, receive.QuarantineEnv{})
	if err != nil {
		return fmt.Errorf("opening the objects of %s: %w", h.GitDir, err)
	}
	h.objs = objs
	return nil
}

// ref returns the value of ref, or the zero hash when it does not exist.
func (h *hubRepo) ref(name string) (plumbing.Hash, error) {
	r, err := h.store.Reference(plumbing.ReferenceName(name))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading %s in %s: %w", name, h.GitDir, err)
	}
	if r.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, fmt.Errorf("%s in %s is a symbolic ref; hub refs must hold an event id", name, h.GitDir)
	}
	return r.Hash(), nil
}

// trustCeilings are generous: reading is the client's; the boundary
// enforces the rules' ceilings.
var trustCeilings = hubrefs.Ceilings{EventsPerRef: 1 << 20, EventBytes: 16 << 20, Parents: 64}

// trust reads and folds refs/hub/trust.
func (h *hubRepo) trust() (*trust.State, error) {
	tip, err := h.ref(hubrefs.TrustRef)
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, fmt.Errorf("%s has no %s: run `git+ init` first", h.where(), hubrefs.TrustRef)
	}
	st, err := h.reader(trustCeilings).Trust(tip)
	if err != nil {
		return nil, fmt.Errorf("reading and folding %s in %s: %w", hubrefs.TrustRef, h.GitDir, err)
	}
	return st, nil
}

// reader reads hub logs and folds through the repository's fold cache,
// which the hook fills as it accepts pushes: a warm read verifies no
// signature again (docs/scale.md). Logs not in the cache are read from the
// objects within c, verified, and stored.
func (h *hubRepo) reader(c hubrefs.Ceilings) *policy.Reader {
	return &policy.Reader{Objects: h.objs, Cache: receive.NewDirCache(h.GitDir), Ceilings: c}
}

func (h *hubRepo) where() string {
	if h.Remote != "." {
		return fmt.Sprintf("%s (remote %s)", h.GitDir, h.Remote)
	}
	return h.GitDir
}

func eventCeilings(t *trust.State) hubrefs.Ceilings {
	c := t.Rules.Ceilings
	return hubrefs.Ceilings{EventsPerRef: c.EventsPerRef, EventBytes: c.EventBytes, Parents: c.ParentsPerEvent}
}

// prState reads and folds refs/hub/pr/<id>.
func (h *hubRepo) prState(id string, t *trust.State) (*pr.State, []hubrefs.Event, error) {
	id, err := h.resolveID(hubrefs.PRRefPrefix, "pull request", id)
	if err != nil {
		return nil, nil, err
	}
	ref := hubrefs.PRRefPrefix + id
	tip, err := h.ref(ref)
	if err != nil {
		return nil, nil, err
	}
	if tip.IsZero() {
		return nil, nil, fmt.Errorf("no pull request %s in %s (no %s; see `git+ pr list --all`)", id, h.where(), ref)
	}
	evs, err := h.reader(eventCeilings(t)).Log(tip)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s in %s: %w", ref, h.GitDir, err)
	}
	st, err := pr.Fold(evs, t)
	if err != nil {
		return nil, nil, fmt.Errorf("folding %s in %s: %w", ref, h.GitDir, err)
	}
	if st.ID != id {
		return nil, nil, fmt.Errorf("%s in %s holds pull request %s, not %s", ref, h.GitDir, st.ID, id)
	}
	return st, evs, nil
}

// prIDs lists the pull request ids under refs/hub/pr/, sorted.
func (h *hubRepo) prIDs() ([]string, error) { return h.refIDs(hubrefs.PRRefPrefix) }

// resolveCommitID resolves rev to a full commit id in the repository.
func (h *hubRepo) resolveCommitID(rev string) (string, error) {
	if rev == "" {
		return "", errors.New("empty revision")
	}
	out, err := gitOut(h.GitDir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || len(out) != 40 {
		return "", fmt.Errorf("revision %q is not a commit in %s (fetch or push it first)", rev, h.GitDir)
	}
	return out, nil
}

// branchRef turns a short branch name (main) into refs/heads/main.
func branchRef(b string) (string, error) {
	if b == "" {
		return "", errors.New("empty branch name")
	}
	if !strings.HasPrefix(b, "refs/") {
		b = "refs/heads/" + b
	}
	if err := trust.ValidBranch(b); err != nil {
		return "", fmt.Errorf("branch %q: %w", b, err)
	}
	return b, nil
}

// ---- keys -----------------------------------------------------------------

// hubKey is the signing key with what is known of it.
type hubKey struct {
	Signer  hubrefs.Signer
	Comment string // from the .pub file or the agent; may be empty
	Source  string // the file or "ssh-agent"
}

func fingerprint(k hubrefs.PublicKey) string { return hubrefs.Fingerprint(k) }

// loadKey loads the signing key: --key (or $GITPLUS_KEY), else the first key
// in ssh-agent.
func loadKey(c *cli.Context) (*hubKey, error) {
	if path := rootString(c, "key"); path != "" {
		s, err := sshsign.LoadKeyFile(path)
		if err != nil {
			return nil, fmt.Errorf("signing key %s: %w", path, err)
		}
		k := &hubKey{Signer: s, Source: path}
		if data, err := os.ReadFile(path + ".pub"); err == nil {
			if pub, comment, _, _, err := ssh.ParseAuthorizedKey(data); err == nil && hubrefs.SameKey(pub, s.PublicKey()) {
				k.Comment = comment
			}
		}
		return k, nil
	}
	sock, err := sshsign.AgentSocket(os.Getenv)
	if err != nil || sock == "" {
		return nil, errors.New("no signing key: pass --key FILE before the verb, set GITPLUS_KEY, or add a key to ssh-agent")
	}
	s, err := sshsign.AgentSigner(sock, nil)
	if err != nil {
		return nil, fmt.Errorf("no usable signing key in ssh-agent at %s (pass --key FILE or ssh-add a key): %w", sock, err)
	}
	k := &hubKey{Signer: s, Source: "ssh-agent"}
	if conn, err := net.Dial("unix", sock); err == nil {
		if keys, err := agent.NewClient(conn).List(); err == nil {
			for _, ak := range keys {
				if bytes.Equal(ak.Marshal(), s.PublicKey().Marshal()) {
					k.Comment = ak.Comment
					break
				}
			}
		}
		conn.Close()
	}
	return k, nil
}

// member returns the member holding the signing key, or an error naming the
// key's fingerprint and what to do.
func memberOf(t *trust.State, k *hubKey) (*trust.Member, error) {
	m, ok := t.MemberByKey(k.Signer.PublicKey())
	if !ok {
		return nil, fmt.Errorf("key %s (%s) is not a member of this repository: ask an admin to run `git+ member add NAME --key '%s' --cap ...`",
			fingerprint(k.Signer.PublicKey()), k.Source, hubrefs.AuthorizedKey(k.Signer.PublicKey()))
	}
	return m, nil
}

// signing is where every writing verb starts: the repository, the trust
// folded now, the signing key and the member holding it.
type signing struct {
	h   *hubRepo
	t   *trust.State
	key *hubKey
	m   *trust.Member
}

// openSigning loads the signing key, opens the repository, folds trust and
// finds the key's member; with caps, the member must hold each of them.
func openSigning(c *cli.Context, caps ...string) (*signing, error) {
	key, err := loadKey(c)
	if err != nil {
		return nil, err
	}
	h, err := openHub(c)
	if err != nil {
		return nil, err
	}
	if h.noRemote {
		return nil, fmt.Errorf("%w: %s is a clone with no upstream remote for its current branch and no origin; pass --remote NAME|URL (or --remote . to write into this clone's own refs on purpose)", ErrNoRemote, h.GitDir)
	}
	t, err := h.trust()
	if err != nil {
		return nil, err
	}
	m, err := memberOf(t, key)
	if err != nil {
		return nil, err
	}
	for _, cp := range caps {
		if err := needCap(m, cp); err != nil {
			return nil, err
		}
	}
	return &signing{h: h, t: t, key: key, m: m}, nil
}

// needCap refuses early, with advice, when m lacks capability c.
func needCap(m *trust.Member, c string) error {
	if !m.Has(c) {
		return fmt.Errorf("member %s (key %s) lacks capability %s: ask an admin to run `git+ member change %s --cap ...`", m.Name, fingerprint(m.Key), c, m.Name)
	}
	return nil
}

// ---- appending ------------------------------------------------------------

// newEvent builds the event as the fold will see it (without its id), so it
// can be judged before anything is written.
func newEvent(payload any, parent plumbing.Hash, k *hubKey, now time.Time) (hubrefs.Event, error) {
	typ, body, err := hubrefs.MarshalPayload(payload)
	if err != nil {
		return hubrefs.Event{}, err
	}
	var b hubrefs.Base
	if err := json.Unmarshal(body, &b); err != nil {
		return hubrefs.Event{}, err
	}
	ev := hubrefs.Event{Type: typ, Repo: b.Repo, Payload: body, Time: now.Unix(), Signer: k.Signer.PublicKey()}
	if !parent.IsZero() {
		ev.Parents = []plumbing.Hash{parent}
	}
	return ev, nil
}

// appendEvent pushes payload onto ref (through the repository's or the
// remote's receive hooks) and returns the new event id.
func (h *hubRepo) appendEvent(ref string, payload any, k *hubKey, name string, t *trust.State) (plumbing.Hash, error) {
	id, err := hubrefs.Append(context.Background(), hubrefs.AppendOptions{
		GitDir:   h.GitDir,
		Remote:   h.Remote,
		Ref:      ref,
		Payload:  payload,
		Signer:   k.Signer,
		Name:     name,
		Ceilings: eventCeilings(t),
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("appending to %s at %s: %w", ref, h.where(), err)
	}
	h.noteEvent(ref, payload, id)
	return id, nil
}

// readKeyArg reads a public key given as an authorized_keys line or as a
// file (a .pub file, or a private key whose public half is taken).
func readKeyArg(arg string) (string, error) {
	if arg == "" {
		return "", errors.New("empty --key: give an authorized_keys line or a key file")
	}
	line := arg
	if data, err := os.ReadFile(arg); err == nil {
		if signer, err := ssh.ParsePrivateKey(data); err == nil {
			return hubrefs.AuthorizedKey(signer.PublicKey()), nil
		}
		line = ""
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				line = l
				break
			}
		}
		_, norm, err := trust.ParseKey(line)
		if err != nil {
			return "", fmt.Errorf("malformed public key in file %s (want one authorized_keys line such as `ssh-ed25519 AAAA...`): %w", arg, err)
		}
		return norm, nil
	} else if !strings.Contains(arg, " ") && (strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".pub")) {
		return "", fmt.Errorf("key file %s: %w", arg, err)
	}
	_, norm, err := trust.ParseKey(line)
	if err != nil {
		return "", fmt.Errorf("malformed public key %q (want an authorized_keys line such as `ssh-ed25519 AAAA...` or a key file): %w", clipArg(line), err)
	}
	return norm, nil
}

func clipArg(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
