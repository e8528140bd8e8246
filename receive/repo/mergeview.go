package repo

import (
	"fmt"
	"io"
	"strings"
)

// MergeView is `git+ pr merge`'s report, as --json prints it (fields in
// name order) and WriteText as text: the pull request, its branch, the
// commit landed, whether this run pushed it, what happened, and the verb's
// own deliveries (mirrors, webhooks) that did not arrive within its wait.
type MergeView struct {
	Branch      string   `json:"branch"`
	Commit      string   `json:"commit"`
	PR          string   `json:"pr"`
	Pushed      bool     `json:"pushed"`
	Result      string   `json:"result"`
	Undelivered []string `json:"undelivered"`
}

// View is m's report, with undelivered: its result says the squash step
// that landed the head, and the source branch deleted or why it was kept.
func (m *Merged) View(undelivered []string) MergeView {
	result := m.Result
	if !m.Squash.IsZero() {
		result += " as squash step " + m.Squash.String()
	}
	if m.SourceDeleted != "" {
		result += "; deleted its source branch " + m.SourceDeleted + " (deleteSourceBranch)"
	} else if m.SourceNote != "" {
		result += "; " + m.SourceNote
	}
	return MergeView{Branch: m.Branch, Commit: m.Head.String(), PR: m.ID, Pushed: m.Pushed, Result: result,
		Undelivered: append([]string{}, undelivered...)}
}

// WriteText prints "<pr> <branch> <commit>: <result>", then one
// "undelivered: ..." line per delivery that did not arrive.
func (v MergeView) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s %s %s: %s\n", v.PR, strings.TrimPrefix(v.Branch, "refs/heads/"), v.Commit, v.Result)
	for _, u := range v.Undelivered {
		fmt.Fprintf(w, "undelivered: %s\n", u)
	}
}

// WriteLines prints the refusal as the verb shows it: the hook's lines as
// they are, then the host's own words (a chained or gitolite hook), each
// after "remote: ".
func (e *LandingRefusedError) WriteLines(w io.Writer) {
	for _, l := range e.Lines {
		fmt.Fprintln(w, l)
	}
	if e.err != nil {
		for _, l := range e.err.Host {
			fmt.Fprintln(w, "remote: "+l)
		}
	}
}
