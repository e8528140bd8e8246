package receive

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/policy"
)

// TestAuditDocuments: the JSON document and the summary line of `git+
// verify --branch` count what the report holds.
func TestAuditDocuments(t *testing.T) {
	h := func(b byte) plumbing.Hash { return plumbing.Hash{b} }
	rep := &policy.AuditReport{Branch: "refs/heads/main", Tip: h(9), Since: h(1), Commits: 5,
		Landings: []policy.AuditLanding{
			{Commit: h(2), Kind: policy.LandingDirect, PR: "p1", Record: "pr.merged", Covers: 2, Trust: "now"},
			{Commit: h(5), Kind: policy.LandingCandidate, PR: "p2", Record: "queue.candidate", Trust: "then"},
			{Commit: h(6), Kind: policy.LandingUnprotected, Record: "no rules", Trust: "then"},
		},
		Unjustified: []policy.AuditFinding{{Commit: h(7), Code: "not-a-pr-head", Reason: "r"}},
	}
	doc := NewAuditJSON(rep)
	if doc.Direct != 1 || doc.Candidates != 1 || doc.Unprotected != 1 || doc.Covered != 2 || doc.Landings != 3 || doc.Justified != 4 || doc.OK {
		t.Fatalf("counts: %+v", doc)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"landingRecords":[`, `"unjustified":[{"commit":"07`, `"since":"01`, `"covers":2`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	want := "refs/heads/main: 5 commits above 010000000000 audited: 3 landings (1 direct covering 2 more commits, 1 candidates, 1 without pull request rules), 1 unjustified"
	if got := AuditSummary(rep); got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
	empty := NewAuditJSON(&policy.AuditReport{Branch: "refs/heads/main"})
	if b, _ := json.Marshal(empty); !strings.Contains(string(b), `"unjustified":[]`) || !strings.Contains(string(b), `"landingRecords":[]`) || !empty.OK {
		t.Errorf("an empty audit: %s", b)
	}
	v := NewVerifyUpdateJSON(policy.Verdict{Update: policy.Update{Ref: "refs/heads/main", New: h(3)}, Code: "not-a-pr-head", Reason: "r"})
	if v.Accepted || v.Old != plumbing.ZeroHash.String() || v.Code != "not-a-pr-head" {
		t.Errorf("verdict document: %+v", v)
	}
}
