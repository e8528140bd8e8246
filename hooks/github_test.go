package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

// githubRepo is a repository with c1 (a), c2 = c1 + b and a changed a, and
// c3 = c1 + c (a rewrite of c2): ids by name.
func githubRepo(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "w")
	fixtures.Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	ids := map[string]string{}
	commit := func(name string, files map[string]string) {
		for f, c := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fixtures.Git(t, dir, "add", ".")
		fixtures.Git(t, dir, "commit", "-q", "-m", name+"\n\nbody of "+name)
		ids[name] = strings.TrimSpace(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	}
	commit("c1", map[string]string{"a": "1\n"})
	commit("c2", map[string]string{"a": "2\n", "b": "b\n"})
	fixtures.Git(t, dir, "checkout", "-q", "-b", "topic", ids["c1"])
	commit("c3", map[string]string{"c": "c\n"})
	return filepath.Join(dir, ".git"), ids
}

func TestBuildGitHubPush(t *testing.T) {
	gitDir, ids := githubRepo(t)
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

// A GitHub-format hook gets one delivery per branch update, in GitHub's
// format; hub events only when its events name them.
func TestPostReceiveGitHubFormat(t *testing.T) {
	gitDir, ids := githubRepo(t)
	writeConfig(t, gitDir, WebhooksFile, `{"hooks":[
		{"name":"gh","url":"http://127.0.0.1:1/","secret":"k","format":"github","repo_url":"https://git.example/w.git"},
		{"name":"plain","url":"http://127.0.0.1:1/p","secret":"k"}]}`)
	in := ids["c1"] + " " + ids["c2"] + " refs/heads/main\n" + ids["c2"] + " " + ids["c3"] + " refs/heads/topic\n"
	rep, err := PostReceive(Options{GitDir: gitDir, Stdin: strings.NewReader(in), NoWorker: true})
	if err != nil || len(rep.Failures) > 0 {
		t.Fatalf("post-receive: %v %v", err, rep)
	}
	jobs, _ := listJobs(gitDir, StatePending)
	var gh, plain []*WebhookJob
	for _, j := range jobs {
		if j.Hook == "gh" {
			gh = append(gh, j)
		} else {
			plain = append(plain, j)
		}
	}
	if len(gh) != 2 || len(plain) != 1 || plain[0].Format != "" {
		t.Fatalf("spooled %d GitHub-format and %d git+ deliveries; want 2 and 1", len(gh), len(plain))
	}
	for _, j := range gh {
		var p GitHubPush
		if j.Format != FormatGitHub || json.Unmarshal(j.Body, &p) != nil || len(j.Updates) != 1 || p.Ref != j.Updates[0].Ref ||
			p.Repository.CloneURL != "https://git.example/w.git" || p.Repository.Name == "" {
			t.Fatalf("GitHub delivery: %+v %s", j, j.Body)
		}
	}
	if (Webhook{Format: FormatGitHub}).wantsHubEvents(&Delivery{Events: []DeliveryEvent{{Type: "pr.opened"}}}) ||
		!(Webhook{Format: FormatGitHub, Events: []string{"push", "pr.opened"}}).wantsHubEvents(&Delivery{Events: []DeliveryEvent{{Type: "pr.opened"}}}) ||
		(Webhook{Events: []string{"pr.opened"}}).wantsBranches() {
		t.Fatal("a GitHub-format hook takes hub events only when its events name them, and branches unless they name only hub events")
	}
}
