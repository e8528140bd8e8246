package mergetree

import "bytes"

// MergeFile merges two versions of a regular file's content against their
// base, line by line, the way git's merge-ort does with an empty config
// (histogram diff, compaction, touching hunks conflict). It returns the
// merged bytes and true when the merge is clean; on a conflict the bytes are
// unspecified and clean is false. Binary content (a NUL byte within the first
// 8000 bytes of any of the three) is always a conflict.
//
// STUB: resolves only the trivial cases until the line merge lands.
func MergeFile(base, ours, theirs []byte) (merged []byte, clean bool) {
	switch {
	case bytes.Equal(ours, theirs), bytes.Equal(base, theirs):
		return ours, true
	case bytes.Equal(base, ours):
		return theirs, true
	}
	return nil, false
}
