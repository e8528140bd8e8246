package mergetree

import "fmt"

// ResultJSON is one merge as `git+ merge-tree --json` prints it: the tree
// when clean, else every conflicted path with its kind.
type ResultJSON struct {
	Clean     bool           `json:"clean"`
	Tree      string         `json:"tree,omitempty"`
	Conflicts []ConflictJSON `json:"conflicts"`
}

// ConflictJSON is one conflicted path of a ResultJSON.
type ConflictJSON struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// JSON is r as ResultJSON.
func (r Result) JSON() ResultJSON {
	j := ResultJSON{Clean: r.Clean(), Conflicts: []ConflictJSON{}}
	if j.Clean {
		j.Tree = r.Tree.String()
	}
	for _, cf := range r.Conflicts {
		j.Conflicts = append(j.Conflicts, ConflictJSON{Kind: fmt.Sprint(cf.Kind), Path: cf.Path})
	}
	return j
}
