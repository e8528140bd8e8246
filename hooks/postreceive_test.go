package hooks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
)

// A GitHub-format hook gets one delivery per branch update, in GitHub's
// format (which events it takes: TestGitHubFormatWants).
func TestPostReceiveGitHubFormat(t *testing.T) {
	gitDir, ids := fixtures.BranchedRepo(t)
	fixtures.WriteFile(t, gitDir, config.WebhooksFile, `{"hooks":[
		{"name":"gh","url":"http://127.0.0.1:1/","secret":"k","format":"github","repo_url":"https://git.example/w.git"},
		{"name":"plain","url":"http://127.0.0.1:1/p","secret":"k"}]}`)
	in := ids["c1"] + " " + ids["c2"] + " refs/heads/main\n" + ids["c2"] + " " + ids["c3"] + " refs/heads/topic\n"
	rep, err := PostReceive(Options{GitDir: gitDir, Stdin: strings.NewReader(in), NoWorker: true})
	if err != nil || len(rep.Failures) > 0 {
		t.Fatalf("post-receive: %v %v", err, rep)
	}
	jobs, _ := delivery.Deliveries(gitDir)
	var gh, plain []*delivery.WebhookJob
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
		var p delivery.GitHubPush
		if j.Format != delivery.FormatGitHub || json.Unmarshal(j.Body, &p) != nil || len(j.Updates) != 1 || p.Ref != j.Updates[0].Ref ||
			p.Repository.CloneURL != "https://git.example/w.git" || p.Repository.Name == "" {
			t.Fatalf("GitHub delivery: %+v %s", j, j.Body)
		}
	}
}
