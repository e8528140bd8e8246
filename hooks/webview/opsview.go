package webview

// What operators must see on the page (docs/operating.md "Where operators
// and users see it"): the server's failing wake rules and its recent
// unjudged-update alarms (hooks/opstatus), read
// from the git directory's records on every request; and each pull
// request's queue events in its timeline.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hooks/opstatus"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/policy"
)

// operatorState fills s's alarms and failing wake rules from gitDir.
func (s *Snapshot) operatorState(gitDir string) {
	s.Alarms = opstatus.RecentUnjudged(gitDir, s.Read)
	fs, err := opstatus.WakeFailingIn(gitDir)
	if err != nil {
		s.Warnings = append(s.Warnings, err.Error())
	}
	s.WakeFailures = fs
}

// queueTimeline adds to each pull request's timeline the events of the
// queues it was in (entered, candidate, left), in time order with its own.
func (s *Snapshot) queueTimeline(rd *policy.Reader, t *trust.State, tips map[string]plumbing.Hash) {
	for name, tip := range tips {
		if !strings.HasPrefix(name, hubrefs.QueueRefPrefix) {
			continue
		}
		evs, err := rd.Log(tip)
		if err != nil {
			continue // judgeQueues warns about a queue it cannot read
		}
		var target string
		for _, ev := range evs {
			var f struct {
				PR       string `json:"pr"`
				Target   string `json:"target"`
				Head     string `json:"head"`
				Step     string `json:"step"`
				Branch   string `json:"branch"`
				Reason   string `json:"reason"`
				Detail   string `json:"detail"`
				Priority string `json:"priority"`
			}
			_ = json.Unmarshal(ev.Payload, &f)
			if ev.Type == hubrefs.TypeQueueOpened {
				target = f.Target
			}
			p := s.PRs[f.PR]
			if f.PR == "" || p == nil {
				continue
			}
			onto := strings.TrimPrefix(target, "refs/heads/")
			if onto == "" {
				onto = "its target"
			}
			it := Item{Event: ev.ID.String(), Time: time.Unix(ev.Time, 0).UTC(), Who: who(t, ev.Signer), Type: ev.Type}
			switch ev.Type {
			case hubrefs.TypeQueueEntered:
				it.Text = fmt.Sprintf("entered the queue for %s at %s", onto, short(f.Head))
				if f.Priority != "" && f.Priority != "normal" {
					it.Text += " (priority " + f.Priority + ")"
				}
			case hubrefs.TypeQueueCandidate:
				it.Text = fmt.Sprintf("queue candidate %s for %s", short(f.Step), onto)
				if f.Branch != "" {
					it.Text += " on " + f.Branch
				}
			case hubrefs.TypeQueueLeft:
				it.Text = fmt.Sprintf("left the queue for %s: %s", onto, f.Reason)
				if f.Detail != "" {
					it.Text += ": " + f.Detail
				}
			default:
				it.Text = ev.Type
			}
			p.Timeline = append(p.Timeline, it)
		}
	}
	for _, p := range s.PRs {
		sort.SliceStable(p.Timeline, func(i, j int) bool { return p.Timeline[i].Time.Before(p.Timeline[j].Time) })
	}
}
