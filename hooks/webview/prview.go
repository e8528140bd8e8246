package webview

import "github.com/gitplus/gitplus/receive/repo"

// View is the pull request as `git+ pr show` prints it: repo.NewPRView with
// the texts, the runs and the queue state the page shows.
func (p *PR) View() repo.PRView {
	j := repo.NewPRView(p.State, p.Events)
	j.Threads = []repo.PRThread{}
	for _, th := range p.Threads {
		tj := repo.PRThread{ID: th.ID, Resolved: th.Resolved, Opener: th.Opened.Who, Body: th.Opened.Body}
		if th.Resolution != nil {
			tj.ResolvedBy, tj.Resolution = th.Resolution.Who, th.Resolution.Body
		}
		j.Threads = append(j.Threads, tj)
	}
	j.Owners, j.OwnersNote = repo.NewOwnerPreviews(p.Owners), p.OwnersNote
	j.Reviews = []repo.PRReview{}
	dismissed := map[string]bool{}
	for _, d := range p.State.Dismissals {
		dismissed[d.Review.String()] = true
	}
	for _, r := range p.Reviews {
		j.Reviews = append(j.Reviews, repo.PRReview{Reviewer: r.Who, Verdict: r.Verdict, Head: r.Head, Current: r.Current, Body: r.Body, Time: r.Time.Unix(), Event: r.Event,
			Dismissed: dismissed[r.Event]})
	}
	j.Runs = []repo.PRRun{}
	for _, rr := range p.RunsByRevision() {
		for _, r := range rr.Runs {
			j.Runs = append(j.Runs, repo.PRRun{Name: r.Name, Revision: r.Revision, Conclusion: r.Conclusion, By: r.Who, Counts: r.Counts, URL: r.URL, Output: r.Output, Sandbox: r.Sandbox, Time: r.Time.Unix()})
		}
	}
	if q := p.Queue; q != nil {
		qj := &repo.PRQueue{Queue: q.Queue, Target: q.Target, State: "left", Reason: q.Left, Detail: q.Detail}
		if q.Position > 0 {
			qj.State, qj.Position, qj.Candidate, qj.Waiting = "queued", q.Position, q.Candidate, q.Waiting
			for _, c := range q.Checks {
				qj.Checks = append(qj.Checks, repo.PRCheck{Name: c.Name, Revision: q.Candidate, Conclusion: c.State})
			}
		}
		j.Queue = qj
	}
	return j
}

// Waiting is why each active entry of queue id waits, pull request → the
// page's reason; empty when the queue is not in the snapshot.
func (s *Snapshot) Waiting(id string) map[string]string {
	why := map[string]string{}
	for _, q := range s.Queues {
		if q.ID == id {
			for _, e := range q.Entries {
				why[e.PR] = e.Waiting
			}
		}
	}
	return why
}
