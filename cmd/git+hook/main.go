// Command git+hook is the lean pre-receive hook of git+: `git+hook
// pre-receive` does exactly what `git+ hook pre-receive` does, from a
// binary that links only what judging a push needs (no CLI, HTTP server,
// webhooks or go-git storage), because it runs on every push and a Go
// binary's start-up time grows with what it links.
//
// `git+ hook install` (and `git+ init`) use it when it sits beside the git+
// binary and both were built from the same source — `go install ./cmd/...`
// installs both — and otherwise fall back to `git+ hook pre-receive` (see
// `go doc ./hooks`).
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/gitplus/gitplus/receive"
)

func main() {
	// Nothing reads a memory profile of a hook; sampling one unwinds the
	// stack (and faults in the binary's line tables) every 512 KiB allocated.
	runtime.MemProfileRate = 0
	if len(os.Args) != 2 || os.Args[1] != "pre-receive" {
		fmt.Fprintln(os.Stderr, "usage: git+hook pre-receive   (the pre-receive hook `git+ hook install` writes; it reads `old new ref` lines on stdin)")
		os.Exit(2)
	}
	os.Exit(receive.RunPreReceive(os.Environ(), os.Stdin, os.Stderr))
}
