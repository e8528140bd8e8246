package policy

import (
	"strings"
	"testing"
)

const rulesSandbox = `{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true,"requireSandbox":true}}}`

// TestRequireSandbox (docs/ci.md): on a branch with requireSandbox a
// required check counts only from completions whose command ran confined
// by Landlock — at the boundary (a direct landing and a candidate step,
// with and without the fold cache: w.judge) and in the audit of the
// branch (every mode: auditAll); without the rule, any completion counts.
func TestRequireSandbox(t *testing.T) {
	type run struct{ conclusion, sandbox string }
	for _, tc := range []struct {
		name  string
		rules string
		runs  []run
		want  string // "" accepted
	}{
		{"confined success", rulesSandbox, []run{{"success", "landlock-7"}}, ""},
		{"env-only success", rulesSandbox, []run{{"success", "env-only"}}, CodeChecksMissing},
		{"sandbox off", rulesSandbox, []run{{"success", "off"}}, CodeChecksMissing},
		{"unsaid (an older worker)", rulesSandbox, []run{{"success", ""}}, CodeChecksMissing},
		{"confined failure", rulesSandbox, []run{{"failure", "landlock-6"}}, CodeChecksFailed},
		{"an unconfined failure after a confined success counts for nothing", rulesSandbox, []run{{"success", "landlock-7"}, {"failure", "env-only"}}, ""},
		{"a confined failure after an unconfined success", rulesSandbox, []run{{"success", "env-only"}, {"failure", "landlock-7"}}, CodeChecksFailed},
		{"without the rule an env-only success counts", auditRules, []run{{"success", "env-only"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, candidate := range []bool{false, true} {
				w := newWorld(t, tc.rules)
				h := w.commit(w.c0, "f.txt", "f\n")
				landed, at := h, h // a direct landing, checked at the head
				if candidate {
					landed = w.merge(w.c0, h)
					at = landed
				}
				p := w.open(h).approve("bob")
				for _, r := range tc.runs {
					p.checkRan("ci", at, r.conclusion, r.sandbox)
				}
				v := w.judge1(up(main, w.c0, landed))
				if v.Code != tc.want {
					t.Fatalf("candidate %v: verdict %q (%s), want %q", candidate, v.Code, v.Reason, tc.want)
				}
				if tc.want == CodeChecksMissing && !strings.Contains(v.Reason, "requireSandbox") {
					t.Errorf("the refusal does not say why an unconfined run does not count: %s", v.Reason)
				}
				p.merged(h, landed)
				w.refs[main] = landed
				rep, err := auditAll(t, w)
				if err != nil {
					t.Fatal(err)
				}
				code := ""
				for _, f := range rep.Unjustified {
					if f.Commit == landed {
						code = f.Code
					}
				}
				if code != tc.want {
					t.Errorf("candidate %v: the audit says %q, the hook %q", candidate, code, tc.want)
				}
			}
		})
	}
}
