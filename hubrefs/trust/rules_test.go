package trust

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseRulesDefaults(t *testing.T) {
	def := DefaultBranch()
	tests := []struct {
		name string
		doc  string
		ref  string
		want Branch
		ok   bool
		ceil Ceilings
	}{
		{"empty object protects nothing", `{}`, "refs/heads/main", Branch{}, false, DefaultCeilings()},
		{"empty branch object takes every default", `{"protected":{"refs/heads/main":{}}}`, "refs/heads/main", def, true, DefaultCeilings()},
		{"absent requiredChecks is ci", `{"protected":{"refs/heads/main":{"requiredApprovals":2}}}`, "refs/heads/main",
			Branch{RequirePullRequest: true, RequiredApprovals: 2, RequiredChecks: []string{"ci"}, QueueDepth: 8}, true, DefaultCeilings()},
		{"null requiredChecks is absent", `{"protected":{"refs/heads/main":{"requiredChecks":null}}}`, "refs/heads/main", def, true, DefaultCeilings()},
		{"explicit empty requiredChecks requires none", `{"protected":{"refs/heads/main":{"requiredChecks":[]}}}`, "refs/heads/main",
			Branch{RequirePullRequest: true, RequiredApprovals: 1, QueueDepth: 8}, true, DefaultCeilings()},
		{"every field set", `{"protected":{"refs/heads/main":{"requirePullRequest":false,"requiredApprovals":0,"requiredChecks":["ci","lint"],"requireResolvedThreads":true,"requireProvenance":true,"queueCandidates":true,"queueDepth":3}},"ceilings":{"eventsPerRef":5,"eventBytes":100,"parentsPerEvent":2}}`,
			"refs/heads/main", Branch{RequiredChecks: []string{"ci", "lint"}, RequireResolvedThreads: true, RequireProvenance: true, QueueCandidates: true, QueueDepth: 3}, true, Ceilings{5, 100, 2}},
		{"partial ceilings keep the other defaults", `{"ceilings":{"eventBytes":4096}}`, "refs/heads/main", Branch{}, false, Ceilings{10000, 4096, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, parse := range []func([]byte) (Rules, error){ParseRules, ParseRulesStrict} {
				r, err := parse([]byte(tt.doc))
				if err != nil {
					t.Fatal(err)
				}
				got, ok := r.For(tt.ref)
				if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("For(%s) = %+v, %v; want %+v, %v", tt.ref, got, ok, tt.want, tt.ok)
				}
				if r.Ceilings != tt.ceil {
					t.Errorf("ceilings %+v, want %+v", r.Ceilings, tt.ceil)
				}
			}
		})
	}
}

// TestCheckEvery: checkEvery defaults to 1 (held as zero, Every reports 1),
// an explicit 1 is the default, and K > 1 is kept.
func TestCheckEvery(t *testing.T) {
	for _, tt := range []struct {
		doc        string
		field, get int
	}{
		{`{"protected":{"refs/heads/main":{}}}`, 0, 1},
		{`{"protected":{"refs/heads/main":{"checkEvery":1}}}`, 0, 1},
		{`{"protected":{"refs/heads/main":{"checkEvery":4}}}`, 4, 4},
		{`{"protected":{"refs/heads/main":{"checkEvery":8,"queueDepth":8}}}`, 8, 8},
	} {
		r, err := ParseRulesStrict([]byte(tt.doc))
		if err != nil {
			t.Fatalf("%s: %v", tt.doc, err)
		}
		b, _ := r.For("refs/heads/main")
		if b.CheckEvery != tt.field || b.Every() != tt.get {
			t.Errorf("%s: CheckEvery %d, Every() %d; want %d, %d", tt.doc, b.CheckEvery, b.Every(), tt.field, tt.get)
		}
	}
}

func TestParseRulesRefused(t *testing.T) {
	tests := []struct {
		name        string
		doc         string
		wantErr     error
		mention     string
		lenientOK   bool // only the strict decoder refuses
		lenientWant string
	}{
		{"unknown top-level field", `{"protectd":{}}`, ErrUnknownField, "rules.protectd", true, ""},
		{"unknown branch field", `{"protected":{"refs/heads/main":{"requiredApproval":2}}}`, ErrUnknownField, `rules.protected["refs/heads/main"].requiredApproval`, true, ""},
		{"field names are case-sensitive", `{"protected":{"refs/heads/main":{"RequiredApprovals":2}}}`, ErrUnknownField, "RequiredApprovals", true, ""},
		{"unknown ceilings field", `{"ceilings":{"eventsPerRef":5,"bogus":1}}`, ErrUnknownField, "rules.ceilings.bogus", true, ""},
		{"negative approvals", `{"protected":{"refs/heads/main":{"requiredApprovals":-1}}}`, ErrInvalidRules, "requiredApprovals", false, ""},
		{"fractional approvals", `{"protected":{"refs/heads/main":{"requiredApprovals":1.5}}}`, ErrInvalidRules, "requiredApprovals", false, ""},
		{"queueDepth zero", `{"protected":{"refs/heads/main":{"queueDepth":0}}}`, ErrInvalidRules, "queueDepth", false, ""},
		{"ceiling zero", `{"ceilings":{"eventBytes":0}}`, ErrInvalidRules, "eventBytes", false, ""},
		{"negative ceiling", `{"ceilings":{"parentsPerEvent":-3}}`, ErrInvalidRules, "parentsPerEvent", false, ""},
		{"short ref name", `{"protected":{"main":{}}}`, ErrBadRef, `"main"`, false, ""},
		{"double star", `{"protected":{"refs/heads/**":{}}}`, ErrBadRef, "**", false, ""},
		{"hub ref", `{"protected":{"refs/hub/trust":{}}}`, ErrInvalidRules, "refs/hub/", false, ""},
		{"bad ref characters", `{"protected":{"refs/heads/a..b":{}}}`, ErrBadRef, "a..b", false, ""},
		{"duplicate check", `{"protected":{"refs/heads/main":{"requiredChecks":["ci","ci"]}}}`, ErrInvalidRules, "twice", false, ""},
		{"bad check name", `{"protected":{"refs/heads/main":{"requiredChecks":["c i"]}}}`, ErrMalformed, "c i", false, ""},
		{"null branch", `{"protected":{"refs/heads/main":null}}`, ErrInvalidRules, "use {}", false, ""},
		{"not an object", `[1]`, ErrInvalidRules, "object", false, ""},
		{"null document", `null`, ErrInvalidRules, "null", false, ""},
		{"wrong type", `{"protected":{"refs/heads/main":{"queueCandidates":"yes"}}}`, ErrInvalidRules, "queueCandidates", false, ""},
		{"checkEvery zero", `{"protected":{"refs/heads/main":{"checkEvery":0}}}`, ErrInvalidRules, "checkEvery", false, ""},
		{"checkEvery negative", `{"protected":{"refs/heads/main":{"checkEvery":-2}}}`, ErrInvalidRules, "checkEvery", false, ""},
		{"checkEvery past queueDepth", `{"protected":{"refs/heads/main":{"checkEvery":5,"queueDepth":4}}}`, ErrInvalidRules, "more than queueDepth", false, ""},
		{"checkEvery past the cap", `{"protected":{"refs/heads/main":{"checkEvery":65,"queueDepth":100}}}`, ErrInvalidRules, "checkEvery", false, ""},
		{"checkEvery fractional", `{"protected":{"refs/heads/main":{"checkEvery":2.5}}}`, ErrInvalidRules, "checkEvery", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRulesStrict([]byte(tt.doc))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("strict: err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("strict: error %q does not mention %q", err, tt.mention)
			}
			_, lerr := ParseRules([]byte(tt.doc))
			if tt.lenientOK && lerr != nil {
				t.Errorf("lenient: %v, want success", lerr)
			}
			if !tt.lenientOK && !errors.Is(lerr, tt.wantErr) {
				t.Errorf("lenient: err = %v, want %v", lerr, tt.wantErr)
			}
		})
	}
}

func TestRulesFor(t *testing.T) {
	r, err := ParseRulesStrict([]byte(`{"protected":{
		"refs/heads/main":{"requiredApprovals":1},
		"refs/heads/*":{"requiredApprovals":2},
		"refs/heads/release/*":{"requiredApprovals":3},
		"refs/heads/release/v1*":{"requiredApprovals":4},
		"refs/heads/release/1.0":{"requiredApprovals":5},
		"refs/heads/a*":{"requiredApprovals":6},
		"refs/heads/*z":{"requiredApprovals":7},
		"refs/heads/x*y*":{"requiredApprovals":8},
		"refs/heads/x*yy":{"requiredApprovals":9}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref  string
		want int // requiredApprovals of the chosen key; 0: unprotected
	}{
		{"refs/heads/main", 1},         // exact beats refs/heads/*
		{"refs/heads/dev", 2},          // plain glob
		{"refs/heads/release", 2},      // refs/heads/* matches the segment "release"
		{"refs/heads/release/2.0", 3},  // longer glob beats shorter
		{"refs/heads/release/v1.2", 4}, // longer glob again
		{"refs/heads/release/v1", 4},   // '*' may match nothing
		{"refs/heads/release/1.0", 5},  // exact beats every glob
		{"refs/heads/release/a/b", 0},  // '*' stays within one segment
		{"refs/heads/feature/x", 0},    // refs/heads/* does not reach two segments
		{"refs/heads/main/x", 0},       //
		{"refs/tags/main", 0},          // other namespaces untouched
		{"refs/heads/MAIN", 2},         // exact match is case-sensitive
		{"refs/heads/ma", 2},           // a* needs a leading a
		{"refs/heads/abz", 7},          // a* and *z: equal length and stars, "refs/heads/*z" sorts first
		{"refs/heads/xayy", 9},         // x*y* and x*yy: equal length, fewer stars wins
		{"refs/heads/xay", 8},          // only x*y*
		{"refs/heads/*", 2},            // a '*' in the asked name is never an exact key
		{"refs/heads/x*y*", 8},         // ... but globs still match it
		{"refs/heads/" + strings.Repeat("a", 30), 6},
	}
	for _, tt := range tests {
		b, ok := r.For(tt.ref)
		got := 0
		if ok {
			got = b.RequiredApprovals
		}
		if got != tt.want {
			t.Errorf("For(%q) picked the key with approvals %d, want %d", tt.ref, got, tt.want)
		}
	}
}

func TestValidCap(t *testing.T) {
	tests := []struct {
		cap string
		ok  bool
	}{
		{"repo.admin", true}, {"source.push", true}, {"hub.pr", true}, {"hub.review", true}, {"hub.queue", true},
		{"hub.check:ci", true}, {"hub.check:ci/lint-1.2", true},
		{"hub.check:", false}, {"hub.check:c i", false}, {"hub.admin", false}, {"", false}, {"Repo.Admin", false}, {"hub.check", false},
	}
	for _, tt := range tests {
		err := ValidCap(tt.cap)
		if (err == nil) != tt.ok {
			t.Errorf("ValidCap(%q) = %v, want ok=%v", tt.cap, err, tt.ok)
		}
		if err != nil && (!errors.Is(err, ErrUnknownCap) || !strings.Contains(err.Error(), tt.cap)) {
			t.Errorf("ValidCap(%q) = %v: want ErrUnknownCap naming it", tt.cap, err)
		}
	}
}

func TestRulesMarshalRoundTrip(t *testing.T) {
	for _, doc := range []string{
		`{}`,
		`{"protected":{"refs/heads/main":{}, "refs/heads/r/*":{"requiredChecks":[],"queueCandidates":true}},"ceilings":{"eventBytes":99}}`,
		`{"protected":{"refs/heads/main":{"queueCandidates":true,"checkEvery":4}}}`,
		`{"protected":{"refs/heads/main":{"queueCandidates":true,"checkEvery":1}}}`,
	} {
		r, err := ParseRulesStrict([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseRulesStrict(out)
		if err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if !reflect.DeepEqual(r, back) {
			t.Errorf("round trip of %s: %+v != %+v", doc, back, r)
		}
	}
}

func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"protected":{"refs/heads/main":{}}}`,
		`{"protected":{"refs/heads/main":{"requiredChecks":[]}},"ceilings":{"eventsPerRef":1}}`,
		`{"protected":{"refs/heads/*":{"requiredApprovals":2,"x":1}}}`,
		`{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"queueDepth":8}},"ceilings":{"eventBytes":65536,"y":0}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		strict, serr := ParseRulesStrict(data)
		lenient, lerr := ParseRules(data)
		if serr == nil {
			if lerr != nil {
				t.Fatalf("strict accepted, lenient refused: %v", lerr)
			}
			if !reflect.DeepEqual(strict, lenient) {
				t.Fatalf("strict %+v != lenient %+v", strict, lenient)
			}
		}
		if lerr == nil {
			if err := lenient.Validate(); err != nil {
				t.Fatalf("parsed rules do not validate: %v", err)
			}
			out, err := lenient.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseRulesStrict(out)
			if err != nil || !reflect.DeepEqual(back, lenient) {
				t.Fatalf("round trip: %v %+v != %+v", err, back, lenient)
			}
			for k := range lenient.Protected {
				lenient.For(k)
			}
		}
	})
}
