package hooks

import (
	"io"

	"github.com/gitplus/gitplus/receive"
)

// PostReceive runs the after-push chain for the updates git feeds the
// post-receive hook on stdin. For now it reads and checks the input and does
// nothing else: mirrors, webhooks and wake rules (DESIGN.md §9) come later.
// The push has already happened, so an error here only gets reported.
func PostReceive(gitDir string, stdin io.Reader) error {
	_, err := receive.ParseHookInput(stdin)
	return err
}
