package repo

import (
	"fmt"
	"io"
	"strings"

	"github.com/gitplus/gitplus/hubrefs/pr"
)

// OwnerPreview is one path owners entry a pull request triggers, as pr
// show, the page and queue show preview it (docs/trust.md, "Path owners"):
// from the head's diff against its merge base with the base branch. The
// hook judges the landing's own diff, which may differ once the base has
// moved.
type OwnerPreview struct {
	Entry     int      `json:"entry"` // index in the branch's owners
	Paths     []string `json:"paths"`
	Approvers []string `json:"approvers"`
	Required  int      `json:"required"`
	Approvals int      `json:"approvals"` // counted at the current head
	Matched   string   `json:"matched"`   // the first changed file it matched
	Met       bool     `json:"met"`
}

// NewOwnerPreviews converts pr.State.OwnersAt's needs.
func NewOwnerPreviews(needs []pr.OwnerNeed) []OwnerPreview {
	out := make([]OwnerPreview, 0, len(needs))
	for _, n := range needs {
		out = append(out, OwnerPreview{Entry: n.Entry, Paths: n.Owner.Paths, Approvers: n.Owner.Approvers,
			Required: n.Owner.Approvals, Approvals: n.Approvals, Matched: n.Matched, Met: n.Met()})
	}
	return out
}

// writeOwners writes pr show's owners lines.
func writeOwners(wr io.Writer, owners []OwnerPreview, note string) {
	if note != "" {
		fmt.Fprintf(wr, "owners:    %s\n", note)
	}
	for _, o := range owners {
		state := "met"
		if !o.Met {
			state = fmt.Sprintf("needs %d more", o.Required-o.Approvals)
		}
		fmt.Fprintf(wr, "owners:    [%d] %s (matching %s): %d of %d from %s, %s\n", o.Entry, strings.Join(o.Paths, ", "), o.Matched, o.Approvals, o.Required, strings.Join(o.Approvers, ", "), state)
	}
}
