package repo

// What `git+ verify` reads from its flags and prints (docs/cli.md; the
// judgement is receive.VerifyUpdate's and receive.AuditBranchAt's).

import (
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
)

// ZeroID is the 40 zeros that name no commit (a ref created or deleted).
const ZeroID = "0000000000000000000000000000000000000000"

// RevOrZero resolves rev, given as the verb's --flag, to a commit of
// gitDir: "" or ZeroID is the zero id (no commit).
func RevOrZero(gitDir, flag, rev string) (plumbing.Hash, error) {
	if rev == "" || rev == ZeroID {
		return plumbing.ZeroHash, nil
	}
	out, err := Git(gitDir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || len(out) != 40 {
		return plumbing.ZeroHash, fmt.Errorf("--%s %q is not a commit in %s (fetch it first, or give 40 zeros for none)", flag, rev, gitDir)
	}
	return plumbing.NewHash(out), nil
}

// VerdictLine is `git+ verify --ref`'s line for v, the verdict on ref's
// update old → new: "git+: accepted <ref>: <old> -> <new>", or the hook's
// refusal line.
func VerdictLine(ref string, old, new plumbing.Hash, v policy.Verdict) string {
	if v.Accepted() {
		return fmt.Sprintf("git+: accepted %s: %s -> %s", ref, old, new)
	}
	return v.Line()
}

// AuditView is `git+ verify --branch`'s report of rep: --json prints the
// audit and, in a clone, the copy it judged (Source); WriteText prints it
// as text.
type AuditView struct {
	receive.AuditJSON
	Source *AuditSourceJSON `json:"source,omitempty"`

	rep *policy.AuditReport
	src AuditSource
}

// AuditSourceJSON is the copy of a remote's branch an audit judged.
type AuditSourceJSON struct {
	Remote  string `json:"remote"`
	URL     string `json:"url"`
	Ref     string `json:"ref"` // the ref the tip was read from
	Tip     string `json:"tip"`
	Fetched bool   `json:"fetched"`
}

// NewAuditView is the report of rep, an audit of src.
func NewAuditView(rep *policy.AuditReport, src AuditSource) AuditView {
	v := AuditView{AuditJSON: receive.NewAuditJSON(rep), rep: rep, src: src}
	if !src.Own() {
		v.Source = &AuditSourceJSON{Remote: src.Remote, URL: src.URL, Ref: src.Tracking, Tip: src.Tip.String(), Fetched: src.Fetched}
	}
	return v
}

// WriteText prints where the branch was read from (in a clone), every
// unjustified commit, every bypassed landing, and the summary.
func (v AuditView) WriteText(w io.Writer) {
	if line := v.src.Line(); line != "" {
		fmt.Fprintln(w, line)
	}
	for _, f := range v.rep.Unjustified {
		fmt.Fprintf(w, "unjustified %s: [%s] %s\n", f.Commit, f.Code, f.Reason)
	}
	for _, b := range receive.AuditBypasses(v.rep) {
		fmt.Fprintln(w, b)
	}
	fmt.Fprintln(w, receive.AuditSummary(v.rep))
}

// Failed reports whether `git+ verify --branch` exits 1 for the audit: a
// commit is unjustified or, with strict, a landing was bypassed.
func (v AuditView) Failed(strict bool) bool {
	return len(v.rep.Unjustified) > 0 || strict && len(receive.AuditBypasses(v.rep)) > 0
}
