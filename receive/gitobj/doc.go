// Package gitobj reads git objects as git reads them: THE commit parser and
// THE tree parser of git+. Every other package (policy, mergetree, hubrefs,
// the commands) takes a commit's tree and parents, and a tree's entries,
// from here, so that what git+ judges is exactly what git will later check
// out.
//
// A parse succeeds only on an object that git reads the same way and that
// `git fsck --strict` (what receive.fsckObjects runs on a push) accepts;
// everything else is an error wrapping ErrMalformedCommit or
// ErrMalformedTree that names the fault. A few rules are deliberately
// stricter than git (a tree must be written exactly as git writes trees; a
// commit may not repeat tree, parent, author or committer after its
// committer line): docs/objects.md lists them, with what git does and why.
//
// The package is a leaf: it imports only the standard library and go-git's
// plumbing (for the object id type).
package gitobj
