package delivery

// GitHub-compatible webhooks (docs/delivery.md, "GitHub-style deliveries").
//
// A webhook with "format": "github" is sent what GitHub sends for a push,
// so consumers of GitHub push webhooks (adnanh/webhook, Jenkins, Buildkite,
// Woodpecker, Argo Events) trigger on git+'s branches, the queue's
// candidates (refs/heads/queue/...) among them, unchanged.
//
// Decisions:
//   - One delivery per branch update (refs/heads/*), as GitHub sends one
//     push event per ref: body GitHub's push payload (GitHubPush), headers
//     X-GitHub-Event: push, X-GitHub-Delivery: <the delivery id>,
//     X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body under the
//     hook's secret> and the older X-Hub-Signature: sha1=<hex HMAC-SHA1>.
//   - Hub events (refs/hub/*) have no GitHub counterpart and keep git+'s own
//     document and X-GitPlus-* headers. Such a hook gets them only when its
//     "events" name event types explicitly: "*", "push" and no events mean
//     branch updates alone, so a GitHub consumer never sees a document it
//     cannot read. Tag and other ref updates are not sent.
//   - commits lists at most 20 commits, oldest first: those of before..after,
//     or, for a created branch, those of after reachable from no other
//     branch; each with its first-parent changes (added, removed,
//     modified). head_commit is after's commit (null for a deletion).
//     forced is true for a deletion and for an update that is not a
//     fast-forward.
//   - git+ names no pusher in this format (who pushed is in the signed
//     records under refs/hub/*): pusher and sender are "git+". repository
//     carries the git directory's name, and the hook's "repo_url" (when
//     set) as its url, html_url and clone_url.
//   - The format is fixed when the delivery is spooled (WebhookJob.Format):
//     every attempt, and a redelivery, sends the same body with the same
//     headers even if webhooks.json changed meanwhile.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gitplus/gitplus/receive/gitio"
)

// Webhook formats.
const (
	FormatGitPlus = "gitplus" // git+'s own document (the default)
	FormatGitHub  = "github"  // GitHub's push event, one per branch update
)

// GitHub's header names.
const (
	GitHubEventHeader       = "X-GitHub-Event"
	GitHubDeliveryHeader    = "X-GitHub-Delivery"
	GitHubSignatureHeader   = "X-Hub-Signature-256"
	GitHubSignatureHeaderV1 = "X-Hub-Signature"
)

// maxGitHubCommits bounds the commits listed in one push payload.
const maxGitHubCommits = 20

// SignSHA1 returns the X-Hub-Signature value of body under secret.
func SignSHA1(secret string, body []byte) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return "sha1=" + hex.EncodeToString(m.Sum(nil))
}

// GitHubPush is GitHub's push payload, the fields consumers read.
type GitHubPush struct {
	Ref        string         `json:"ref"`
	Before     string         `json:"before"`
	After      string         `json:"after"`
	Created    bool           `json:"created"`
	Deleted    bool           `json:"deleted"`
	Forced     bool           `json:"forced"`
	BaseRef    *string        `json:"base_ref"`
	Compare    string         `json:"compare"`
	Commits    []GitHubCommit `json:"commits"`
	HeadCommit *GitHubCommit  `json:"head_commit"`
	Repository GitHubRepo     `json:"repository"`
	Pusher     GitHubPerson   `json:"pusher"`
	Sender     GitHubUser     `json:"sender"`
}

// GitHubCommit is one commit of a push payload.
type GitHubCommit struct {
	ID        string       `json:"id"`
	TreeID    string       `json:"tree_id"`
	Distinct  bool         `json:"distinct"`
	Message   string       `json:"message"`
	Timestamp string       `json:"timestamp"`
	URL       string       `json:"url"`
	Author    GitHubPerson `json:"author"`
	Committer GitHubPerson `json:"committer"`
	Added     []string     `json:"added"`
	Removed   []string     `json:"removed"`
	Modified  []string     `json:"modified"`
}

// GitHubPerson is an author, committer or pusher.
type GitHubPerson struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Username string `json:"username,omitempty"`
}

// GitHubUser is the sender.
type GitHubUser struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

// GitHubRepo is the repository of a push payload.
type GitHubRepo struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	FullName string `json:"full_name"`
	Private  bool   `json:"private"`
	URL      string `json:"url"`
	HTMLURL  string `json:"html_url"`
	CloneURL string `json:"clone_url"`
}

// isGitHub reports whether h is sent in GitHub's format.
func (h Webhook) isGitHub() bool { return h.Format == FormatGitHub }

// wantsHubEvents reports whether a GitHub-format hook also takes d in git+'s
// format: only for hub events its "events" name.
func (h Webhook) wantsHubEvents(d *Delivery) bool {
	for _, e := range h.Events {
		if e == "*" || e == "push" {
			continue
		}
		for _, ev := range d.Events {
			if ev.Type == e {
				return true
			}
		}
	}
	return false
}

// branchUpdates are d's refs/heads/* updates.
func branchUpdates(d *Delivery) []DeliveryRef {
	var out []DeliveryRef
	for _, u := range d.Updates {
		if strings.HasPrefix(u.Ref, "refs/heads/") {
			out = append(out, u)
		}
	}
	return out
}

// wantsBranches reports whether a GitHub-format hook takes branch updates.
func (h Webhook) wantsBranches() bool {
	if len(h.Events) == 0 {
		return true
	}
	for _, e := range h.Events {
		if e == "*" || e == "push" {
			return true
		}
	}
	return false
}

// BuildGitHubPush reads, from the repository at gitDir after the push, the
// GitHub push payload of branch update u (the repository fields are left
// for the caller: see withRepo).
func BuildGitHubPush(ctx context.Context, gitDir string, u DeliveryRef) (*GitHubPush, error) {
	zero := strings.Repeat("0", len(u.New))
	p := &GitHubPush{Ref: u.Ref, Before: u.Old, After: u.New, Commits: []GitHubCommit{},
		Created: u.Old == zero, Deleted: u.New == zero,
		Pusher: GitHubPerson{Name: "git+"}, Sender: GitHubUser{Login: "git+", Type: "Bot"}}
	p.Compare = u.Old + "..." + u.New
	if p.Deleted {
		p.Forced = true
		return p, nil
	}
	git := func(args ...string) ([]byte, error) {
		out, errb, err := gitio.RunGit(ctx, "", nil, append([]string{"--git-dir=" + gitDir}, args...)...)
		if err != nil {
			return nil, fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), gitDir, err, bytes.TrimSpace(errb))
		}
		return out, nil
	}
	if !p.Created {
		if _, err := git("merge-base", "--is-ancestor", u.Old, u.New); err != nil {
			p.Forced = true
		}
	}
	rev := []string{"rev-list", "--max-count=" + fmt.Sprint(maxGitHubCommits), u.New}
	if p.Created {
		rev = append(rev, "--not", "--exclude="+strings.TrimPrefix(u.Ref, "refs/heads/"), "--branches")
	} else {
		rev = append(rev, "--not", u.Old)
	}
	out, err := git(rev...)
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(string(out))
	for i := len(ids) - 1; i >= 0; i-- { // oldest first
		c, err := githubCommit(git, ids[i])
		if err != nil {
			return nil, err
		}
		p.Commits = append(p.Commits, *c)
	}
	if n := len(p.Commits); n > 0 && p.Commits[n-1].ID == u.New {
		head := p.Commits[n-1]
		p.HeadCommit = &head
	} else {
		c, err := githubCommit(git, u.New)
		if err != nil {
			return nil, err
		}
		c.Distinct = false
		p.HeadCommit = c
	}
	return p, nil
}

// githubCommit reads commit id and its first-parent changes.
func githubCommit(git func(...string) ([]byte, error), id string) (*GitHubCommit, error) {
	out, err := git("show", "-s", "--format=%H%x00%T%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", id)
	if err != nil {
		return nil, err
	}
	f := strings.SplitN(string(out), "\x00", 9)
	if len(f) != 9 {
		return nil, fmt.Errorf("reading commit %s: unexpected output of git show", id)
	}
	c := &GitHubCommit{ID: f[0], TreeID: f[1], Distinct: true, Message: strings.TrimRight(f[8], "\n"), Timestamp: f[7],
		Author: GitHubPerson{Name: f[2], Email: f[3]}, Committer: GitHubPerson{Name: f[5], Email: f[6]},
		Added: []string{}, Removed: []string{}, Modified: []string{}}
	out, err = git("diff-tree", "-r", "-z", "--no-commit-id", "--name-status", "--root", "-m", "--first-parent", id)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		status, name := parts[i], parts[i+1]
		switch {
		case strings.HasPrefix(status, "A"):
			c.Added = append(c.Added, name)
		case strings.HasPrefix(status, "D"):
			c.Removed = append(c.Removed, name)
		case strings.HasPrefix(status, "R"), strings.HasPrefix(status, "C"):
			if i+2 < len(parts) { // a rename or copy names two paths
				c.Removed = append(c.Removed, name)
				c.Added = append(c.Added, parts[i+2])
				i++
			}
		default:
			c.Modified = append(c.Modified, name)
		}
	}
	return c, nil
}

// body encodes p for hook h: the repository named and located as h says.
func (p GitHubPush) body(h Webhook, repo string) ([]byte, error) {
	p.Repository = GitHubRepo{Name: repo, FullName: repo, Private: true, URL: h.RepoURL, HTMLURL: h.RepoURL, CloneURL: h.RepoURL}
	if h.RepoURL != "" {
		for i := range p.Commits {
			p.Commits[i].URL = strings.TrimSuffix(h.RepoURL, ".git") + "/commit/" + p.Commits[i].ID
		}
	}
	return json.Marshal(p)
}

// spoolGitHub spools hook h's GitHub-format deliveries of push d: one per
// branch update (payloads built once per push in cache), and one in git+'s
// format when h names hub events d carries.
func spoolGitHub(ctx context.Context, gitDir string, h Webhook, d *Delivery, gitPlusBody []byte, cache map[string]*GitHubPush, now time.Time) ([]string, []string) {
	var ids, fails []string
	add := func(j *WebhookJob) {
		if err := spoolJob(gitDir, j); err != nil {
			fails = append(fails, fmt.Sprintf("spooling the delivery to webhook %s: %v", h.Name, err))
			return
		}
		ids = append(ids, j.ID)
	}
	if h.wantsBranches() {
		for _, u := range branchUpdates(d) {
			p, ok := cache[u.Ref]
			if !ok {
				var err error
				if p, err = BuildGitHubPush(ctx, gitDir, u); err != nil {
					fails = append(fails, fmt.Sprintf("webhook %s: building the GitHub push of %s: %v", h.Name, u.Ref, err))
				}
				cache[u.Ref] = p
			}
			if p == nil {
				continue
			}
			body, err := p.body(h, d.Repo)
			if err != nil {
				fails = append(fails, fmt.Sprintf("webhook %s: encoding the GitHub push of %s: %v", h.Name, u.Ref, err))
				continue
			}
			add(&WebhookJob{ID: newJobID(time.Now()), Hook: h.Name, URL: h.URL, Format: FormatGitHub, Created: now.UTC(),
				State: StatePending, NextAttempt: now.UTC(), Updates: []DeliveryRef{u}, Body: body})
		}
	}
	if h.wantsHubEvents(d) {
		add(&WebhookJob{ID: newJobID(time.Now()), Hook: h.Name, URL: h.URL, Created: now.UTC(), State: StatePending,
			NextAttempt: now.UTC(), Updates: d.Updates, Body: gitPlusBody})
	}
	return ids, fails
}
