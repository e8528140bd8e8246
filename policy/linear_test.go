package policy

import "testing"

const rulesLinear = `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"queueCandidates":true,"mergeMethod":"squash","requireLinearHistory":true}}}`

// TestLinearHistory: on a branch with requireLinearHistory every commit a
// landing adds has at most one parent, whatever else justifies it.
func TestLinearHistory(t *testing.T) {
	for _, c := range []struct {
		name, rules, want string
		setup             func(w *world) Update
	}{
		{"a one-parent pull request head lands", rulesLinear, "", func(w *world) Update {
			return up(main, w.c0, w.ready(w.commit(w.c0, "a", "a\n")).head)
		}},
		{"a pull request head that is a merge", rulesLinear, CodeNonlinear, func(w *world) Update {
			a := w.commit(w.c0, "a", "a\n")
			b := w.commit(w.c0, "b", "b\n")
			return up(main, w.c0, w.ready(w.merge(a, b)).head)
		}},
		{"a pull request head with a merge below it", rulesLinear, CodeNonlinear, func(w *world) Update {
			a := w.commit(w.c0, "a", "a\n")
			b := w.commit(w.c0, "b", "b\n")
			return up(main, w.c0, w.ready(w.commit(w.merge(a, b), "c", "c\n")).head)
		}},
		{"a candidate merge step, green and approved", rulesLinear, CodeNonlinear, func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h).approve("bob")
			c := w.merge(w.c0, h)
			p.check("ci", c, "success")
			return up(main, w.c0, c)
		}},
		{"a fast-forward merge without pull requests", `{"protected":{"refs/heads/main":{"requirePullRequest":false,"mergeMethod":"squash","requireLinearHistory":true}}}`, CodeNonlinear, func(w *world) Update {
			a := w.commit(w.c0, "a", "a\n")
			b := w.commit(w.c0, "b", "b\n")
			return up(main, w.c0, w.commit(w.merge(a, b), "c", "c\n"))
		}},
		{"the same merge without the rule", `{"protected":{"refs/heads/main":{"requirePullRequest":false}}}`, "", func(w *world) Update {
			a := w.commit(w.c0, "a", "a\n")
			b := w.commit(w.c0, "b", "b\n")
			return up(main, w.c0, w.commit(w.merge(a, b), "c", "c\n"))
		}},
		{"one-parent commits without pull requests", `{"protected":{"refs/heads/main":{"requirePullRequest":false,"mergeMethod":"squash","requireLinearHistory":true}}}`, "", func(w *world) Update {
			return up(main, w.c0, w.commit(w.commit(w.c0, "a", "a\n"), "b", "b\n"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.rules)
			u := c.setup(w)
			v := w.judge1(u)
			if v.Code != c.want {
				t.Fatalf("code %q (%s), want %q", v.Code, v.Reason, c.want)
			}
		})
	}
}
