package receive

// `git+ verify` from Go (docs/architecture.md): judging one update as the
// hook would, and auditing a branch's first-parent history (policy.Audit),
// on this repository's refs and objects as they are. Nothing is fetched
// here (a clone's verb fetches first: receive/repo.ResolveAuditSource), so
// what it says is about the replica as it is.

import (
	"fmt"
	"runtime"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/policy"
)

// VerifyUpdate judges the update of ref from old to new (zero ids: created
// or deleted) as the pre-receive hook would, outside any push.
func VerifyUpdate(gitDir, ref string, old, new plumbing.Hash) (policy.Verdict, error) {
	vs, err := JudgePush(gitDir, QuarantineEnv{}, []policy.Update{{Ref: ref, Old: old, New: new}})
	if err != nil {
		return policy.Verdict{}, fmt.Errorf("judging %s %s -> %s in %s: %w", ref, old, new, gitDir, err)
	}
	return vs[0], nil
}

// AuditBranch audits every landing on branch's (a full ref) first-parent
// chain above since (zero: from the root commit) with policy.Audit; pull
// request logs load on every CPU.
func AuditBranch(gitDir, branch string, since plumbing.Hash) (*policy.AuditReport, error) {
	return AuditBranchAt(gitDir, branch, plumbing.ZeroHash, since)
}

// AuditBranchAt is AuditBranch with branch's tip given (zero: the ref's
// own value): a clone audits its remote's branch at the commit it fetched
// (a remote-tracking ref), judged as the branch it is.
func AuditBranchAt(gitDir, branch string, tip, since plumbing.Hash) (*policy.AuditReport, error) {
	refs, err := ReadRefs(gitDir)
	if err != nil {
		return nil, fmt.Errorf("reading the refs of %s: %w", gitDir, err)
	}
	if !tip.IsZero() {
		refs[branch] = tip
	}
	store, err := OpenStore(gitDir, QuarantineEnv{})
	if err != nil {
		return nil, fmt.Errorf("opening the objects of %s: %w", gitDir, err)
	}
	defer store.Close()
	// The store and the cache directory are safe for concurrent use.
	rep, err := policy.Audit(policy.AuditInput{Objects: Objects{Store: store}, Refs: refs, Branch: branch, Since: since,
		Cache: NewDirCache(gitDir), Workers: runtime.GOMAXPROCS(0)})
	if err != nil {
		return nil, fmt.Errorf("auditing %s in %s: %w", branch, gitDir, err)
	}
	return rep, nil
}

// VerifyUpdateJSON is `git+ verify --ref --json`.
type VerifyUpdateJSON struct {
	Ref      string `json:"ref"`
	Old      string `json:"old"`
	New      string `json:"new"`
	Accepted bool   `json:"accepted"`
	Code     string `json:"code,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// NewVerifyUpdateJSON is v as `git+ verify --ref --json` prints it.
func NewVerifyUpdateJSON(v policy.Verdict) VerifyUpdateJSON {
	return VerifyUpdateJSON{Ref: v.Update.Ref, Old: v.Update.Old.String(), New: v.Update.New.String(), Accepted: v.Accepted(), Code: v.Code, Reason: v.Reason}
}

// AuditFindingJSON is one unjustified commit.
type AuditFindingJSON struct {
	Commit string `json:"commit"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// AuditLandingJSON is one landing and the record that justifies it.
type AuditLandingJSON struct {
	Commit string `json:"commit"`
	Kind   string `json:"kind"`
	PR     string `json:"pr,omitempty"`
	Record string `json:"record"`
	Covers int    `json:"covers,omitempty"`
	Trust  string `json:"trust"`
	// Bypass: who bypassed the rules for this landing and why
	// (docs/trust.md, "An audited bypass").
	Bypass *AuditBypassJSON `json:"bypass,omitempty"`
}

// AuditBypassJSON is a bypassed landing's bypass.
type AuditBypassJSON struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
	Event  string `json:"event"`
}

// AuditJSON is `git+ verify --branch --json`.
type AuditJSON struct {
	Branch      string             `json:"branch"`
	Tip         string             `json:"tip"`
	Since       string             `json:"since"`
	Commits     int                `json:"commits"`
	Landings    int                `json:"landings"`
	Direct      int                `json:"direct"`
	Candidates  int                `json:"candidates"`
	Unprotected int                `json:"unprotected"`
	Covered     int                `json:"covered"`
	Justified   int                `json:"justified"`
	OK          bool               `json:"ok"`
	Bypassed    int                `json:"bypassed"`
	Unjustified []AuditFindingJSON `json:"unjustified"`
	Records     []AuditLandingJSON `json:"landingRecords"`
}

// unjustifiedCommits counts the commits with a finding that no landing
// justifies: a false pr.merged is a finding on a landing another record
// justified (docs/events.md, "pr.merged"), one commit may have both.
func unjustifiedCommits(rep *policy.AuditReport) int {
	landed := map[plumbing.Hash]bool{}
	for _, l := range rep.Landings {
		landed[l.Commit] = true
	}
	seen := map[plumbing.Hash]bool{}
	for _, f := range rep.Unjustified {
		if !landed[f.Commit] {
			seen[f.Commit] = true
		}
	}
	return len(seen)
}

// NewAuditJSON is rep as `git+ verify --branch --json` prints it.
func NewAuditJSON(rep *policy.AuditReport) AuditJSON {
	direct, cands, unprot, covered := rep.Counts()
	out := AuditJSON{Branch: rep.Branch, Tip: rep.Tip.String(), Since: rep.Since.String(), Commits: rep.Commits,
		Landings: len(rep.Landings), Direct: direct, Candidates: cands, Unprotected: unprot, Covered: covered,
		Justified: rep.Commits - unjustifiedCommits(rep), OK: len(rep.Unjustified) == 0,
		Unjustified: []AuditFindingJSON{}, Records: []AuditLandingJSON{}}
	for _, f := range rep.Unjustified {
		out.Unjustified = append(out.Unjustified, AuditFindingJSON{Commit: f.Commit.String(), Code: f.Code, Reason: f.Reason})
	}
	for _, l := range rep.Landings {
		lj := AuditLandingJSON{Commit: l.Commit.String(), Kind: l.Kind, PR: l.PR, Record: l.Record, Covers: l.Covers, Trust: l.Trust}
		if b := l.Bypass; b != nil {
			lj.Bypass = &AuditBypassJSON{By: b.By, Reason: b.Reason, Event: b.Event.String()}
			out.Bypassed++
		}
		out.Records = append(out.Records, lj)
	}
	return out
}

// AuditSummary is the last line `git+ verify --branch` prints.
func AuditSummary(rep *policy.AuditReport) string {
	direct, cands, unprot, covered := rep.Counts()
	s := fmt.Sprintf("%s: %d commits above %s audited: %d landings (%d direct covering %d more commits, %d candidates, %d without pull request rules), %d unjustified",
		rep.Branch, rep.Commits, rep.Since.String()[:12], len(rep.Landings), direct, covered, cands, unprot, len(rep.Unjustified))
	if rep.First && len(rep.Landings) > 0 {
		// The root commit landed through a pull request (policy/auditfirst.go).
		s = fmt.Sprintf("%s: %d commits from the first, %s (pull request %s created the branch), audited: %d landings (%d direct covering %d more commits, %d candidates, %d without pull request rules), %d unjustified",
			rep.Branch, rep.Commits, rep.Since, rep.Landings[0].PR, len(rep.Landings), direct, covered, cands, unprot, len(rep.Unjustified))
	}
	if n := len(AuditBypasses(rep)); n > 0 {
		s += fmt.Sprintf(", %d bypassed", n)
	}
	return s
}

// AuditBypasses are the landings a bypass justified, in order, each as
// `git+ verify --branch` lists it: commit, pull request, who and why.
func AuditBypasses(rep *policy.AuditReport) []string {
	var out []string
	for _, l := range rep.Landings {
		if b := l.Bypass; b != nil {
			out = append(out, fmt.Sprintf("bypassed %s: pull request %s landed by a bypass of %s (%s): %s", l.Commit, l.PR, b.By, b.Event, b.Reason))
		}
	}
	return out
}
