package main

// The server's wake failures in `git+ queue show` (hooks/opstatus,
// docs/operating.md "When a wake rule fails"): where they are read from is
// repo.ServerGitDir and opstatus.WakeFailuresOf.

import (
	"github.com/gitplus/gitplus/hooks/opstatus"
	"github.com/gitplus/gitplus/receive/repo"
)

// wakeFailures are the failing wake rules of h's server, as queue show's
// view has them.
func wakeFailures(h *repo.Repo) []repo.WakeFailure {
	fs := opstatus.WakeFailuresOf(h.ServerGitDir(), h.GitDir)
	out := make([]repo.WakeFailure, 0, len(fs))
	for _, f := range fs {
		out = append(out, repo.WakeFailure{Rule: f.Rule, Failures: f.Failures, Since: f.Since, Last: f.Last, Exit: f.Exit,
			Error: f.Error, Line: f.Line, Text: f.String()})
	}
	return out
}
