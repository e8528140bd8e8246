package main

// The fold cache is local trusted state (docs/foldcache.md): it lives in
// the git directory, beside the refs, and nothing git transfers carries it.
// These tests show that a replica made by clone or fetch receives none of
// it, and that git+ verify reaches the same verdicts with the cache as
// without it (verify believes no merge fact: it recomputes every
// candidate's tree).

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
)

// cacheFiles lists the files under dir's fold cache directory.
func cacheFiles(t *testing.T, gitDir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(gitDir, receive.FoldCacheDir))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// noGitplusFiles fails if anything under dir is named gitplus or is a
// file whose name is one of the source's cache entries.
func noGitplusFiles(t *testing.T, dir string, entries []string) {
	t.Helper()
	names := map[string]bool{}
	for _, n := range entries {
		names[n] = true
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "gitplus" || names[d.Name()] {
			t.Errorf("replica %s holds %s, from the source's fold cache", dir, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFoldCacheStaysLocal(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := queueSetup(t, e, 3)

	// Pass 1 publishes three candidates through the hook, which learns
	// their merge facts; checks follow (green, green, red).
	rep := queueRunJSON(t, e, bare)
	if len(rep.Published) != 3 {
		t.Fatalf("pass 1 published %+v, want 3 candidates", rep.Published)
	}
	for i, conclusion := range []string{"success", "success", "failure"} {
		e.ok(bare, "ci", "pr", "check", ids[i], "--name", "ci", "--rev", rep.Published[i].Step, "--conclusion", conclusion)
	}

	// replicas clones and fetches bare every way git offers and checks
	// that none of them holds any of the cache.
	replicas := func(t *testing.T) {
		entries := cacheFiles(t, bare)
		if len(entries) == 0 {
			t.Fatalf("no fold cache entries under %s: the test would show nothing", bare)
		}
		root := t.TempDir()
		dirs := []string{filepath.Join(root, "mirror.git"), filepath.Join(root, "url-mirror.git"), filepath.Join(root, "bare.git"), filepath.Join(root, "fetched.git")}
		fixtures.Git(t, root, "clone", "-q", "--mirror", bare, dirs[0])
		fixtures.Git(t, root, "clone", "-q", "--mirror", "file://"+bare, dirs[1])
		fixtures.Git(t, root, "clone", "-q", "--bare", "--no-local", bare, dirs[2])
		fixtures.Git(t, dirs[2], "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
		fixtures.Git(t, root, "init", "-q", "--bare", dirs[3])
		fixtures.Git(t, dirs[3], "fetch", "-q", bare, "+refs/*:refs/*")
		// The replicas do hold what the cache was built from.
		want := hubRefs(t, bare)
		for _, d := range dirs {
			if got := hubRefs(t, d); got != want {
				t.Fatalf("replica %s has other hub refs:\n%s\nwant\n%s", d, got, want)
			}
			noGitplusFiles(t, d, entries)
		}
	}

	t.Run("with merge facts", func(t *testing.T) {
		for _, s := range rep.Published {
			f := filepath.Join(bare, receive.FoldCacheDir, policy.MergeFactKey(plumbing.NewHash(s.Step)).String())
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("published candidate %s has no merge fact: %v", s.Step, err)
			}
		}
		replicas(t)
	})

	// Pass 2 lands C_1..C_2 and evicts the third; then a commit is put on
	// main around the boundary, so that the audit has a verdict to reach
	// besides "justified".
	rep = queueRunJSON(t, e, bare)
	if len(rep.Landed) != 2 {
		t.Fatalf("pass 2 landed %+v, want 2", rep.Landed)
	}
	tip := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))
	rogue := strings.TrimSpace(fixtures.Git(t, bare, "commit-tree", "-p", tip, "-m", "around the boundary", tip+"^{tree}"))
	fixtures.Git(t, bare, "update-ref", "refs/heads/main", rogue, tip)

	t.Run("after landing", replicas)

	t.Run("verify without the cache", func(t *testing.T) {
		verify := func() (string, int) {
			t.Helper()
			out, errOut, code := e.run(bare, "", nil, "verify", "--branch", "main", "--json")
			if code != 0 && code != 1 {
				t.Fatalf("verify: exit %d\n%s", code, errOut)
			}
			return out, code
		}
		warm, warmCode := verify() // the cache the hooks filled
		var got receive.AuditJSON
		if err := json.Unmarshal([]byte(warm), &got); err != nil {
			t.Fatalf("verify --json: %v\n%s", err, warm)
		}
		if warmCode != 1 || got.Candidates != 2 || len(got.Unjustified) != 1 || got.Unjustified[0].Commit != rogue {
			t.Fatalf("verify with the hooks' cache: exit %d, want 1 naming %s and 2 candidates:\n%s", warmCode, rogue, warm)
		}
		aside := filepath.Join(t.TempDir(), "gitplus")
		if err := os.Rename(filepath.Join(bare, "gitplus"), aside); err != nil {
			t.Fatal(err)
		}
		cold, coldCode := verify()
		if coldCode != warmCode || cold != warm {
			t.Fatalf("verify without the fold cache: exit %d\n%s\nwith it: exit %d\n%s", coldCode, cold, warmCode, warm)
		}
		// Again from the cache verify itself wrote.
		if again, code := verify(); code != warmCode || again != warm {
			t.Fatalf("verify from its own cache: exit %d\n%s\nwant exit %d\n%s", code, again, warmCode, warm)
		}
		// And on a mirror, which has no cache of its own to begin with.
		mirror := filepath.Join(t.TempDir(), "mirror.git")
		fixtures.Git(t, bare, "clone", "-q", "--mirror", bare, mirror)
		out, errOut, code := e.run(mirror, "", nil, "verify", "--branch", "main", "--json")
		if code != warmCode || out != warm {
			t.Fatalf("verify on a mirror: exit %d\n%s%s\nwant exit %d\n%s", code, out, errOut, warmCode, warm)
		}
	})
}
