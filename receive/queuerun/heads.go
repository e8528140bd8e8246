package queuerun

// Fetching what a pass builds from (docs/queue.md "Running the queue from a
// clone"): a runner working from a clone has the remote's hub refs and
// target (readRemote), but the commits the queued pull requests propose
// live on other branches the clone may never have fetched. Before planning,
// the runner fetches every head the plan may merge — the queued entries'
// heads, their pull requests' current heads and the candidate branches —
// that its object store lacks: by id first (git's protocol v2 servers give
// any reachable commit), else by the pull requests' source branches and the
// candidate branches by name, into refs/gitplus/queue-heads/ so they are
// kept while the runner works.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/receive/gitio"
)

// headsRefPrefix holds the branches fetched by name for a pass.
const headsRefPrefix = "refs/gitplus/queue-heads/"

// missingHeads lists the commits st's plan may build from that st's object
// store does not hold, each with the branches that may carry it.
func (r *runner) missingHeads(st *state) (ids []plumbing.Hash, branches []string) {
	want := map[plumbing.Hash]bool{}
	byName := map[string]bool{}
	add := func(id string, branch string) {
		if !plumbing.IsHash(id) {
			return
		}
		h := plumbing.NewHash(id)
		if ok, err := st.objs.HasObject(h); err == nil && ok {
			return
		}
		want[h] = true
		if branch != "" {
			byName[branch] = true
		}
	}
	for _, e := range st.q.Entries {
		p := st.prs[e.PR]
		source := ""
		if p != nil {
			source = p.Source
			if p.State == pr.Open {
				add(p.Head, p.Source)
			}
		}
		add(e.Head, source)
	}
	for name, id := range st.branches {
		add(id.String(), name)
	}
	for h := range want {
		ids = append(ids, h)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for b := range byName {
		branches = append(branches, b)
	}
	sort.Strings(branches)
	return ids, branches
}

// fetchHeads fetches what missingHeads lists from the remote; fetched
// reports whether it fetched anything (the store must then be reopened).
// A commit still missing afterwards is left to the plan, which reports it.
func (r *runner) fetchHeads(ctx context.Context, st *state) (fetched bool, err error) {
	o := r.o
	if o.Remote == "." {
		return false, nil
	}
	ids, branches := r.missingHeads(st)
	if len(ids) == 0 {
		return false, nil
	}
	specs := make([]string, len(ids))
	for i, id := range ids {
		specs[i] = id.String()
	}
	byID := gitio.Fetch(ctx, o.GitDir, o.Remote, o.Env, specs...)
	if byID == nil {
		return true, nil
	}
	if len(branches) == 0 {
		return false, fmt.Errorf("fetching the heads the queue merges from %s: %w", o.Remote, byID)
	}
	specs = specs[:0]
	for _, b := range branches {
		specs = append(specs, "+"+b+":"+headsRefPrefix+strings.TrimPrefix(b, "refs/heads/"))
	}
	if err := gitio.Fetch(ctx, o.GitDir, o.Remote, o.Env, specs...); err != nil {
		return false, fmt.Errorf("fetching the heads the queue merges from %s (by id: %v): %w", o.Remote, byID, err)
	}
	return true, nil
}
