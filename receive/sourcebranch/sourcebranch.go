// Package sourcebranch deletes a landed pull request's source branch when
// the rules of the branch it landed on say "deleteSourceBranch" (docs/queue.md,
// "Deleting the source branch"), for the verbs that land: `git+ queue run`
// (receive/queuerun) and `git+ pr merge` (receive/repo).
//
// Decisions:
//   - Only after the landing and its pr.merged took effect; a verb that
//     crashes in between leaves the branch (nothing depends on it).
//   - Only the branch pr.opened named as the source, only while it still
//     holds the landed head (the deletion is a compare-and-swap push: a
//     branch its author pushed more to is kept), and never a branch the
//     rules protect.
//   - The deletion is an ordinary push, signed as the verb's pushes are:
//     with requireKnownPusher the signer needs source.push (the branch is
//     no candidate branch). A refusal or a lost race is a note, never the
//     verb's failure.
package sourcebranch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/gitio"
)

// Push is how the verb pushes: its repository, remote and signing.
type Push struct {
	GitDir, Remote string
	Env            []string
	PushOptions    []string
	Sign           *gitio.PushSigning
}

// Delete deletes source (pr.opened's source branch) after head landed on
// base, when base's rules ask for it. It reports whether it deleted, and a
// note when it kept the branch for a reason worth telling ("" when the
// rules do not ask or there is no source).
func Delete(ctx context.Context, p Push, rules trust.Rules, base, source, head string) (bool, string) {
	b, ok := rules.For(base)
	if !ok || !b.DeleteSourceBranch || source == "" || !plumbing.IsHash(head) {
		return false, ""
	}
	if !strings.HasPrefix(source, "refs/heads/") || source == base {
		return false, fmt.Sprintf("kept %s: not a branch other than %s", source, base)
	}
	if _, prot := rules.For(source); prot {
		return false, fmt.Sprintf("kept %s: the rules protect it", source)
	}
	_, err := gitio.Push(ctx, gitio.PushOptions{GitDir: p.GitDir, Remote: p.Remote, Env: p.Env, PushOptions: p.PushOptions, Sign: p.Sign,
		Updates: []gitio.PushUpdate{{Ref: source, Old: plumbing.NewHash(head), New: plumbing.ZeroHash}}})
	var refused *gitio.PushRefusedError
	switch {
	case err == nil:
		return true, ""
	case errors.Is(err, gitio.ErrPushStale):
		return false, fmt.Sprintf("kept %s: it no longer holds the landed head %s", source, head)
	case errors.As(err, &refused):
		return false, fmt.Sprintf("could not delete %s (deleteSourceBranch): %s", source, strings.Join(refused.Lines, "; "))
	default:
		return false, fmt.Sprintf("could not delete %s (deleteSourceBranch): %v", source, err)
	}
}
