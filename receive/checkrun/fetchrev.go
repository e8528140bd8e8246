package checkrun

// The revision to check, fetched when the clone lacks it (docs/queue.md,
// "CI"): a wake rule or a CI job told `--rev C_i` of a candidate the
// clone has not fetched yet used to fail at the checkout.
//
// Decisions:
//   - Nothing is fetched when the commit is there, or when the repository
//     is its own remote (the server).
//   - First the commit itself (`git fetch REMOTE REV`: git's protocol v2
//     serves any commit reachable from a ref); then, for servers that
//     serve only advertised tips, the candidate branches
//     (refs/heads/queue/*) into refs/gitplus/queue-heads/, where `git+ queue
//     run` keeps them too. Still missing, the checkout's error says so.

import (
	"context"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/repo"
)

// hasCommit reports whether rev names a commit in gitDir.
func hasCommit(gitDir, rev string) bool {
	_, err := repo.Git(gitDir, "cat-file", "-e", rev+"^{commit}")
	return err == nil
}

// EnsureRevision fetches rev (a full commit id; other revisions are left
// to the caller to resolve) from r's remote when r lacks it.
func EnsureRevision(r *repo.Repo, rev string, log io.Writer) error {
	if !plumbing.IsHash(rev) || hasCommit(r.GitDir, rev) || r.Remote == "." || r.Remote == "" {
		return nil
	}
	fmt.Fprintf(log, "git+: %s is not in %s: fetching it from %s\n", rev, r.GitDir, r.Remote)
	ctx := context.Background()
	err := gitio.Fetch(ctx, r.GitDir, r.Remote, nil, rev)
	if hasCommit(r.GitDir, rev) {
		return nil
	}
	err2 := gitio.Fetch(ctx, r.GitDir, r.Remote, nil, "+refs/heads/queue/*:refs/gitplus/queue-heads/*")
	if hasCommit(r.GitDir, rev) {
		return nil
	}
	return fmt.Errorf("%s is not in %s and fetching it from %s did not bring it (%v; %v): fetch the candidate branch (or the pull request's head) first", rev, r.GitDir, r.Remote, err, err2)
}
