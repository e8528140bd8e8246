package delivery

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

func TestBuildGitHubPush(t *testing.T) {
	gitDir, ids := fixtures.BranchedRepo(t)
	zero := strings.Repeat("0", 40)
	ctx := context.Background()

	// A fast-forward: c1..c2, not forced, c2's changes.
	p, err := BuildGitHubPush(ctx, gitDir, DeliveryRef{Ref: "refs/heads/main", Old: ids["c1"], New: ids["c2"]})
	if err != nil {
		t.Fatal(err)
	}
	if p.Created || p.Deleted || p.Forced || len(p.Commits) != 1 || p.HeadCommit == nil || p.HeadCommit.ID != ids["c2"] ||
		!slices.Equal(p.HeadCommit.Added, []string{"b"}) || !slices.Equal(p.HeadCommit.Modified, []string{"a"}) ||
		p.HeadCommit.Message != "c2\n\nbody of c2" || !p.HeadCommit.Distinct {
		t.Fatalf("fast-forward: %+v", p)
	}
	// A rewrite: c2 → c3 is forced; its commits are those not under c2.
	p, err = BuildGitHubPush(ctx, gitDir, DeliveryRef{Ref: "refs/heads/topic", Old: ids["c2"], New: ids["c3"]})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Forced || p.Created || len(p.Commits) != 1 || p.Commits[0].ID != ids["c3"] || !slices.Equal(p.Commits[0].Added, []string{"c"}) {
		t.Fatalf("rewrite: %+v", p)
	}
	// A deletion: no head commit, forced.
	p, err = BuildGitHubPush(ctx, gitDir, DeliveryRef{Ref: "refs/heads/topic", Old: ids["c3"], New: zero})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Deleted || !p.Forced || p.HeadCommit != nil || len(p.Commits) != 0 {
		t.Fatalf("deletion: %+v", p)
	}
	b, _ := json.Marshal(p)
	if !strings.Contains(string(b), `"head_commit":null`) || !strings.Contains(string(b), `"commits":[]`) {
		t.Fatalf("deletion encoded: %s", b)
	}
}

// A GitHub-format hook takes hub events only when its events name them, and
// branches unless they name only hub events.
func TestGitHubFormatWants(t *testing.T) {
	if (Webhook{Format: FormatGitHub}).wantsHubEvents(&Delivery{Events: []DeliveryEvent{{Type: "pr.opened"}}}) ||
		!(Webhook{Format: FormatGitHub, Events: []string{"push", "pr.opened"}}).wantsHubEvents(&Delivery{Events: []DeliveryEvent{{Type: "pr.opened"}}}) ||
		(Webhook{Events: []string{"pr.opened"}}).wantsBranches() {
		t.Fatal("a GitHub-format hook takes hub events only when its events name them, and branches unless they name only hub events")
	}
}
