package gitio

// Pushing objects a repository does not hold yet without writing them into
// it first: they are written into a throwaway repository that borrows the
// target's objects (objects/info/alternates), and pushed from there. So they
// reach the target only through receive-pack, inside its quarantine, which
// git discards whole when the hook refuses the push: a refused push leaves
// nothing in the target's object directory (docs/serving.md, "Recording a
// check without git+"). `git+ serve`'s check API appends events this way.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// ScratchObject is an object to push: its type and content.
type ScratchObject struct {
	Type    plumbing.ObjectType
	Content []byte
}

// PushScratch writes objs into a scratch repository (in the system's
// temporary directory, removed before it returns) whose object store
// borrows gitDir's, and pushes o.Updates from it into gitDir with Push (o's
// GitDir and Remote are set here). It returns the objects' ids, in order,
// and Push's result and error.
func PushScratch(ctx context.Context, gitDir string, objs []ScratchObject, o PushOptions) ([]plumbing.Hash, PushResult, error) {
	target, err := ResolveGitDir(gitDir)
	if err != nil {
		return nil, PushResult{}, err
	}
	scratch, err := os.MkdirTemp("", "gitplus-push-")
	if err != nil {
		return nil, PushResult{}, fmt.Errorf("a scratch repository to push into %s from: %w", target, err)
	}
	defer os.RemoveAll(scratch)
	// A bare repository as git recognises one: HEAD, refs/ and objects/.
	for _, d := range []string{"refs", filepath.Join("objects", "info")} {
		if err := os.MkdirAll(filepath.Join(scratch, d), 0o755); err != nil {
			return nil, PushResult{}, fmt.Errorf("scratch repository %s: %w", scratch, err)
		}
	}
	if err := os.WriteFile(filepath.Join(scratch, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		return nil, PushResult{}, fmt.Errorf("scratch repository %s: %w", scratch, err)
	}
	alt := filepath.Join(target, "objects") + "\n"
	if err := os.WriteFile(filepath.Join(scratch, "objects", "info", "alternates"), []byte(alt), 0o644); err != nil {
		return nil, PushResult{}, fmt.Errorf("scratch repository %s: %w", scratch, err)
	}
	ids := make([]plumbing.Hash, len(objs))
	for i, ob := range objs {
		if ids[i], err = WriteLooseObject(scratch, ob.Type, ob.Content); err != nil {
			return nil, PushResult{}, err
		}
	}
	o.GitDir, o.Remote = scratch, target
	res, err := Push(ctx, o)
	return ids, res, err
}
