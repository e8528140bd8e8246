package main

// `until PROGRAM ARGS...`: for a session that waits on the server's own
// work (a wake rule's queue pass), as a user re-runs `git fetch` until it
// has arrived.

import (
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// untilBound is how long `until` keeps trying: a bound for a stuck
// server, far above what the work takes, not a timing the test asserts.
const untilBound = 3 * time.Minute

// scriptUntil is `until PROGRAM ARGS...`: runs PROGRAM like exec, again
// every 200 ms while it fails, and fails itself if PROGRAM has not exited
// 0 within untilBound. Its last run's output is kept for stdout and
// stderr, as after exec.
func scriptUntil(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: until PROGRAM [ARGS...]")
	}
	end := time.Now().Add(untilBound)
	for {
		err := ts.Exec(args[0], args[1:]...)
		if err == nil {
			return
		}
		if _, ok := exitCode(err); !ok || time.Now().After(end) {
			ts.Fatalf("until: %s did not succeed within %v: %v", args[0], untilBound, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
