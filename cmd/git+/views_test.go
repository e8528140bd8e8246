package main

import "github.com/gitplus/gitplus/receive/repo"

// The readers' --json views are receive/repo's; the e2e tests decode them.
type (
	queueJSON        = repo.QueueView
	queueSummaryJSON = repo.QueueSummary
	prDiffJSON       = repo.DiffRange
	memberJSON       = repo.MemberView
)
