// Package mergetree computes git's three-way merge of two commits' trees,
// deterministically and with git parity (docs/merge.md).
//
// # Shape
//
// Everything is a function of an object store (Store: read an object's type
// and bytes) and the inputs; there is no clock, configuration, environment
// or process. GoGitStore adapts any go-git storer.EncodedObjectStorer,
// including a layered quarantine store. Trees and commits are parsed from
// their raw bytes here (not with go-git's object decoders), and each tree is
// decoded at most once per merge.
//
// Merge(store, ours, theirs, opt) merges two commits over their merge base;
// MergeTrees does the same for three tree ids; MergeBase/MergeBases find the
// base. The builder (queue run, the CLI) and the verifier (the hook) run the
// same code: Options.Writer set → new blobs and trees are written (only when
// the merge is clean, children before parents); unset → they are only
// hashed in memory.
//
// # Merge base
//
// Best common ancestors as `git merge-base --all`: paint down from both
// commits in committer-date order (a stable priority queue) and stop once
// every queued commit lies below a found common ancestor, then drop
// candidates that are ancestors of other candidates. The walk touches the
// commits between the tips and the bases, not the history below. Of
// several bases the one with the newest committer date wins, then the
// smallest id; no virtual ancestor is made. None → ErrUnrelated.
//
// # Tree merge and cost
//
// Per path, comparing (mode, id) with modes canonicalized as git reads
// them, the rules of docs/merge.md, "Tree level" (see merger.resolve). Subtrees
// equal on two sides (base = ours, base = theirs, ours = theirs) and trees
// added on one side only are taken by id without being read, so the cost of
// a merge follows what the two sides changed, not the size of the tree.
// Regular files changed on both sides are merged by MergeFile; binary
// content (a NUL byte in the first 8000 bytes of any of the three) is a
// conflict of kind "binary".
//
// # Conflicts
//
// A conflict is a path and one stable kind word: content, add/add,
// modify/delete, file/directory, binary, distinct types, submodule. A path
// is listed once. A file that git would move aside to path~branch because a
// directory stays at path is reported at path with kind file/directory.
// Result.Tree is the zero hash when there are conflicts (git's conflicted
// tree, with conflict markers, is not reproduced).
//
// # Known deviations from git 2.39 merge-ort
//
//   - Renames: git detects renames and we do not; docs/merge.md's parity target
//     excludes merges that involve a rename.
//   - Empty trees: git drops an empty tree unless it was resolved trivially.
//     We match that at the level where the two sides' identical trees meet,
//     but an empty subtree nested inside two identical non-empty trees is
//     kept by us (we take the identical tree by id, without reading it) and
//     dropped by git. git never writes empty trees itself, so only crafted
//     objects can tell; the outcome is a different tree, i.e. a refusal,
//     never a false "clean".
//   - Several merge bases: one is chosen (above); git merges them into a
//     virtual base. The results agree when there is one base or when the
//     bases have identical trees.
package mergetree
