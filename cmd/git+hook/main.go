// Command git+hook is the lean receive hook of git+: `git+hook
// pre-receive` does exactly what `git+ hook pre-receive` does, and `git+hook
// post-receive BIN` what `git+ hook post-receive` does (spooling deliveries
// for the worker BIN runs: docs/delivery.md), from a binary that links only
// what those need (no CLI, HTTP client or server), because they run on every
// push and a Go binary's start-up time grows with what it links.
//
// `git+ hook install` (and `git+ init`) use it when it sits beside the git+
// binary and both were built from the same source — `go install ./cmd/...`
// installs both — and otherwise fall back to `git+ hook pre-receive` (see
// `go doc ./hooks/install`, lean.go).
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/termtext"
)

func main() {
	// Nothing reads a memory profile of a hook; sampling one unwinds the
	// stack (and faults in the binary's line tables) every 512 KiB allocated.
	runtime.MemProfileRate = 0
	switch {
	case len(os.Args) == 2 && os.Args[1] == "pre-receive":
		os.Exit(receive.RunPreReceive(os.Environ(), os.Stdin, os.Stderr))
	case len(os.Args) == 3 && os.Args[1] == "post-receive":
		os.Exit(postReceive(os.Args[2]))
	}
	fmt.Fprintln(os.Stderr, "usage: git+hook pre-receive | git+hook post-receive GITPLUS_BINARY   (the hooks `git+ hook install` writes; they read `old new ref` lines on stdin)")
	os.Exit(2)
}

// postReceive is `git+ hook post-receive` (hooks.PostReceive: wake rules
// started, deliveries spooled for the worker that bin runs): the package
// links no HTTP client, so this starts as fast as pre-receive.
func postReceive(bin string) int {
	gitDir := hooks.AbsGitDir("")
	// What it says reaches the pusher's terminal (git relays it): escaped
	// as all git+ text is (docs/cli.md "Text on a terminal").
	stderr := termtext.NewWriter(os.Stderr)
	defer stderr.Flush()
	if _, err := hooks.PostReceive(hooks.Options{GitDir: gitDir, Stdin: os.Stdin, Stderr: stderr, Environ: os.Environ(), Binary: bin}); err != nil {
		fmt.Fprintf(stderr, "git+: post-receive in %s: %v\n", gitDir, err)
		return 1
	}
	return 0
}
