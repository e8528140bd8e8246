package main

import (
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// batchSupport is where batch checks (the rules field checkEvery, issue #20
// item 2) plug into the simulator. The planner of this build has no batch
// checks, so setCheckEvery is nil and a discipline with CheckEvery > 1 is
// refused; once the planner marks groups, fill the three hooks in:
//
//   - setCheckEvery: b.CheckEvery = k;
//   - candidate: copy the group marks of the Publish into the
//     queue.candidate (GroupEnd, GroupSize), as receive/queuerun does;
//   - ciRuns: the CI wake rule runs only a group's end (GroupEnd empty or
//     equal to Step), since CI runs nothing on the other steps.
//
// Everything else (culprit search inside a red group, landing on a green
// group end) is the planner's and needs nothing here.
type batchSupport struct {
	setCheckEvery func(b *trust.Branch, k int)
	candidate     func(p queue.Publish) hubrefs.QueueCandidate
	ciRuns        func(p queue.Publish) bool
}

var batch = batchSupport{
	candidate: func(p queue.Publish) hubrefs.QueueCandidate {
		return hubrefs.QueueCandidate{Base: base(hubrefs.TypeQueueCandidate), PR: p.PR, Head: p.Head, Step: p.Step, Parents: p.Parents, Branch: p.Branch}
	},
	ciRuns: func(queue.Publish) bool { return true },
}
