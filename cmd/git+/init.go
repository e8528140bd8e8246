package main

// git+ init: create the bare repository if needed and write the root of
// refs/hub/trust (repo.created), the one ref git+ writes directly
// (docs/architecture.md).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

func init() {
	register(hubVerb(&cli.Command{
		Name:      "init",
		Usage:     "create a bare repository (if needed) and its trust log, with the signing key as admin",
		ArgsUsage: "[DIR]",
		Description: "DIR defaults to --repo, then the current git directory. Prints the new RepoID.\n" +
			"Refuses a repository that already has refs/hub/trust.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "repository name (default: DIR's base name without .git)"},
			&cli.StringFlag{Name: "admin", Usage: "member name of the admin (default: the key's comment before any @, else admin)"},
			&cli.BoolFlag{Name: "open", Usage: "do not require a known pusher for pushes by path (write no requireKnownPusher rule; pushes through git+ serve still need one)"},
			&cli.StringFlag{Name: "initial-branch", Value: "main", Usage: "the branch HEAD names in a repository init creates (given explicitly, also in an existing one)"},
			jsonFlag(),
		},
		Action: initAction,
	}))
}

// installHooksOnInit is the call point for installing the receive hooks
// into a repository `git+ init` created or adopted (package hooks, another
// change). It runs after refs/hub/trust is written.
var installHooksOnInit = func(gitDir string) error { return nil }

func initAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErr("usage: git+ init [--name NAME] [--admin NAME] [DIR]")
	}
	dir := c.Args().First()
	if dir == "" {
		dir = rootString(c, "repo")
	}
	if dir == "" {
		gd, _, err := findGitDir("")
		if err != nil {
			return usageErr("git+ init: give DIR (the bare repository to create) or run inside a repository: %v", err)
		}
		dir = gd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fail(1, fmt.Errorf("init %s: %w", dir, err))
	}

	// Everything that can be judged before writing is judged first.
	key, err := loadKey(c)
	if err != nil {
		return fail(1, err)
	}
	admin := c.String("admin")
	if admin == "" {
		admin = defaultAdminName(key.Comment)
	}
	if err := trust.ValidName(admin); err != nil {
		return fail(1, fmt.Errorf("admin name %q: %w (pass --admin NAME)", admin, err))
	}
	name := c.String("name")
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(abs), ".git")
		if name == "" || name == "." || name == string(filepath.Separator) {
			name = "repo"
		}
	}

	exists, err := dirHasContent(abs)
	if err != nil {
		return fail(1, fmt.Errorf("init %s: %w", abs, err))
	}
	headRef, err := branchRef(c.String("initial-branch"))
	if err != nil || !strings.HasPrefix(headRef, "refs/heads/") {
		return usageErr("--initial-branch %q: name a branch (main, trunk): %v", c.String("initial-branch"), err)
	}
	branch := strings.TrimPrefix(headRef, "refs/heads/")
	if !exists {
		if _, err := gitOut("", "init", "--quiet", "--bare", "--initial-branch", branch, abs); err != nil {
			return fail(1, fmt.Errorf("creating the bare repository %s: %w", abs, err))
		}
	}
	gitDir, _, err := findGitDir(abs)
	if err != nil {
		return fail(1, fmt.Errorf("init %s: it exists and is not a git repository (choose an empty or new directory): %w", abs, err))
	}
	if exists && c.IsSet("initial-branch") {
		if _, err := gitOut(gitDir, "symbolic-ref", "HEAD", headRef); err != nil {
			return fail(1, fmt.Errorf("pointing HEAD of %s at %s: %w", gitDir, headRef, err))
		}
	}
	h := &hubRepo{GitDir: gitDir, Remote: "."}
	if err := h.open(); err != nil {
		return fail(1, err)
	}
	if tip, err := h.ref(hubrefs.TrustRef); err != nil {
		return fail(1, err)
	} else if !tip.IsZero() {
		return fail(1, fmt.Errorf("%s already has %s (at %s): the repository is initialised; see `git+ whoami` and `git+ member list`", gitDir, hubrefs.TrustRef, tip))
	}

	id, err := uuid.NewV7()
	if err != nil {
		return fail(1, fmt.Errorf("generating a RepoID: %w", err))
	}
	payload := hubrefs.RepoCreated{
		Base:  hubrefs.Base{Type: hubrefs.TypeRepoCreated, Repo: id.String()},
		Name:  name,
		Admin: hubrefs.Admin{Name: admin, Key: hubrefs.AuthorizedKey(key.Signer.PublicKey())},
	}
	evID, err := hubrefs.WriteEvent(h.store, payload, nil, admin, time.Now(), key.Signer)
	if err != nil {
		return fail(1, fmt.Errorf("writing repo.created into %s: %w", gitDir, err))
	}
	ev, err := hubrefs.ReadEvent(h.store, evID, hubrefs.DefaultCeilings)
	if err != nil {
		return fail(1, fmt.Errorf("reading back repo.created %s in %s: %w", evID, gitDir, err))
	}
	if err := trust.Authorize(ev, nil); err != nil {
		return fail(1, fmt.Errorf("repo.created refused: %w", err))
	}
	tip := evID
	if !c.Bool("open") {
		// A repository made by git+ requires a known pusher however it is
		// pushed to (docs/serving.md "Who must be known").
		if tip, err = initRules(h, ev, evID, admin, key); err != nil {
			return fail(1, err)
		}
	}
	// Zero old value: update-ref refuses if another init won the race.
	if _, err := gitOut(gitDir, "update-ref", "-m", "git+ init", hubrefs.TrustRef, tip.String(), plumbing.ZeroHash.String()); err != nil {
		return fail(1, fmt.Errorf("setting %s in %s: %w", hubrefs.TrustRef, gitDir, err))
	}
	if err := installHooksOnInit(gitDir); err != nil {
		return fail(1, fmt.Errorf("installing hooks into %s: %w", gitDir, err))
	}
	if wantJSON(c) {
		return printJSON(c, map[string]string{
			"repo": id.String(), "name": name, "admin": admin,
			"fingerprint": fingerprint(key.Signer.PublicKey()),
			"gitDir":      gitDir, "event": evID.String(), "tip": tip.String(),
		})
	}
	fmt.Fprintf(c.App.ErrWriter, "initialised %s (%s), admin %s (%s)\n", gitDir, name, admin, fingerprint(key.Signer.PublicKey()))
	fmt.Fprintln(c.App.Writer, id.String())
	return nil
}

// InitialRules are the rules `git+ init` records after repo.created.
const InitialRules = `{"requireKnownPusher":true}`

// initRules writes the initial rules.set on top of repo.created (root,
// stored as rootID) and returns its id, checked by the trust fold.
func initRules(h *hubRepo, root hubrefs.Event, rootID plumbing.Hash, admin string, key *hubKey) (plumbing.Hash, error) {
	st, err := trust.Fold([]hubrefs.Event{root})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("folding repo.created %s: %w", rootID, err)
	}
	payload := hubrefs.RulesSet{Base: hubrefs.Base{Type: hubrefs.TypeRulesSet, Repo: st.RepoID}, Rules: []byte(InitialRules)}
	id, err := hubrefs.WriteEvent(h.store, payload, []plumbing.Hash{rootID}, admin, time.Now(), key.Signer)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("writing the initial rules.set into %s: %w", h.GitDir, err)
	}
	ev, err := hubrefs.ReadEvent(h.store, id, hubrefs.DefaultCeilings)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading back rules.set %s in %s: %w", id, h.GitDir, err)
	}
	if err := trust.Authorize(ev, st); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("the initial rules.set refused: %w", err)
	}
	return id, nil
}

// defaultAdminName takes the key comment's part before '@' when it is a
// valid member name, else "admin".
func defaultAdminName(comment string) string {
	n, _, _ := strings.Cut(strings.TrimSpace(comment), "@")
	if trust.ValidName(n) == nil {
		return n
	}
	return "admin"
}

// dirHasContent reports whether dir exists and is not an empty directory.
func dirHasContent(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return len(entries) > 0, nil
}
