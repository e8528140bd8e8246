package trust

import (
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func TestPartitionRules(t *testing.T) {
	doc := `{"protected":{"refs/heads/main":{"queueCandidates":true,"partitions":[
		{"name":"web","paths":["web/**"],"reads":["package.json","ui-kit/**"]},
		{"name":"api","paths":["api/**","proto/**"],"reads":["go.mod","go.sum"]},
		{"name":"docs","paths":["/docs/"],"reads":[]}]}}}`
	r, err := ParseRulesStrict([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	b := r.Protected["refs/heads/main"]
	if len(b.Partitions) != 3 || b.Partitions[1].Name != "api" || b.Partitions[2].Reads != nil {
		t.Fatalf("partitions: %+v", b.Partitions)
	}
	out, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseRulesStrict(out)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip of %s: %v %+v", out, err, back)
	}
	if p, ok := b.Partition("api"); !ok || !p.Owns("proto/a.proto") || p.Owns("go.mod") || !p.Input("go.mod") || !p.ReadsPath("go.sum") {
		t.Errorf("api: %+v", p)
	}
	for _, c := range []struct{ parts, want string }{
		{`[{"name":"a","paths":["web/**"]},{"name":"b","paths":["*.js"]}]`, `"web/**" (partitions[0]) and "*.js" (partitions[1]) both match "web/`},
		{`[{"name":"a","paths":["web/"]},{"name":"b","paths":["/web/x/**"]}]`, `"web/" (partitions[0]) and "/web/x/**"`},
		{`[{"name":"a","paths":["src/*/a"]},{"name":"b","paths":["src/x*/*"]}]`, `both match "src/x`},
		{`[{"name":"a","paths":["a"]},{"name":"a","paths":["b"]}]`, "names a partition twice"},
		{`[{"name":"global","paths":["a"]}]`, "reserved"},
		{`[{"name":"-x","paths":["a"]}]`, "partition name"},
		{`[{"name":"a","paths":[]}]`, "paths is empty"},
		{`[{"name":"a"}]`, "paths is empty"},
		{`[{"name":"a","paths":["a","a"]}]`, `names "a" twice`},
		{`[{"name":"a","paths":["!a"]}]`, "negation"},
		{`[{"name":"a","paths":["a"],"reads":["[x]"]}]`, "character classes"},
		{`{"name":"a"}`, "want a list"},
		{`[1]`, "must be a JSON object"},
	} {
		doc := `{"protected":{"refs/heads/main":{"partitions":` + c.parts + `}}}`
		_, err := ParseRulesStrict([]byte(doc))
		if !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidRules with %q", c.parts, err, c.want)
		}
	}
	if _, err := ParseRulesStrict([]byte(`{"protected":{"refs/heads/main":{"partitions":[{"name":"a","paths":["a"],"path":["b"]}]}}}`)); !errors.Is(err, ErrUnknownField) {
		t.Errorf("unknown field: %v", err)
	}
	// Disjoint: neither refused.
	for _, parts := range []string{
		`[{"name":"a","paths":["/web/**"]},{"name":"b","paths":["/api/**"]}]`,
		`[{"name":"a","paths":["src/a/**"]},{"name":"b","paths":["src/b/**","*.go/x"]},{"name":"c","paths":["docs/**"],"reads":["src/**"]}]`,
		`[{"name":"a","paths":["/*.js"]},{"name":"b","paths":["/*.go"]}]`,
		`[{"name":"a","paths":["/a?"]},{"name":"b","paths":["/a"]}]`,
	} {
		if _, err := ParseRulesStrict([]byte(`{"protected":{"refs/heads/main":{"partitions":` + parts + `}}}`)); err != nil {
			t.Errorf("%s: %v", parts, err)
		}
	}
}

func TestPartitionOf(t *testing.T) {
	web, _ := NewPartition("web", []string{"web/**"}, []string{"package.json", "proto/**"})
	api, _ := NewPartition("api", []string{"api/**", "proto/**"}, []string{"go.mod"})
	b := Branch{Partitions: []Partition{web, api}}
	for _, c := range []struct {
		files []string
		want  string // partition, or "" for global
		file  string
	}{
		{[]string{"web/a.js", "web/b/c.css"}, "web", ""},
		{[]string{"api/x.go"}, "api", ""},
		{[]string{"web/a.js", "api/x.go"}, "", "api/x.go"},
		{[]string{"web/a.js", "package.json"}, "", "package.json"},
		{[]string{"proto/a.proto"}, "", "proto/a.proto"}, // api's, but web reads it
		{[]string{"go.mod"}, "", "go.mod"},
		{[]string{"README.md"}, "", "README.md"},
		{nil, "", ""},
	} {
		m := b.PartitionOf(c.files)
		if m.Partition != c.want || m.File != c.file || m.Global() != (c.want == "") || (m.Global() && m.Why == "") {
			t.Errorf("%v: %+v, want %q (file %q)", c.files, m, c.want, c.file)
		}
	}
	if m := (Branch{}).PartitionOf([]string{"a"}); !m.Global() {
		t.Errorf("no partitions: %+v", m)
	}
}

// TestGlobsOverlapProperty holds the overlap decision to the matcher: over
// random globs and paths, two globs that both match a path are never said
// to be disjoint, and every witness of an overlap is a path both match.
func TestGlobsOverlapProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	names := []string{"a", "b", "ab", "ba", "x.go", "a.go", "go", "aa"}
	segPats := []string{"a", "b", "ab", "*", "a*", "*b", "?", "?b", "a?", "*.go", "x*", "*a*", "**", "a*b"}
	randGlob := func() string {
		n := 1 + rng.Intn(3)
		var segs []string
		for i := 0; i < n; i++ {
			segs = append(segs, segPats[rng.Intn(len(segPats))])
		}
		g := strings.Join(segs, "/")
		switch rng.Intn(4) {
		case 0:
			g = "/" + g
		case 1:
			g += "/"
		}
		return g
	}
	randPath := func() string {
		n := 1 + rng.Intn(4)
		var comps []string
		for i := 0; i < n; i++ {
			comps = append(comps, names[rng.Intn(len(names))])
		}
		return strings.Join(comps, "/")
	}
	paths := make([]string, 3000)
	for i := range paths {
		paths[i] = randPath()
	}
	overlaps, disjoint := 0, 0
	for k := 0; k < 3000; k++ {
		sa, sb := randGlob(), randGlob()
		a, err := CompilePathGlob(sa)
		if err != nil {
			continue
		}
		b, err := CompilePathGlob(sb)
		if err != nil {
			continue
		}
		w, ok := GlobsOverlap(a, b)
		if ok {
			overlaps++
			if !a.Match(w) || !b.Match(w) {
				t.Fatalf("%q and %q: witness %q is not matched by both", sa, sb, w)
			}
			if w2, ok2 := GlobsOverlap(b, a); !ok2 || !a.Match(w2) || !b.Match(w2) {
				t.Fatalf("%q and %q: not symmetric (%q)", sa, sb, w2)
			}
			continue
		}
		disjoint++
		for _, p := range paths {
			if a.Match(p) && b.Match(p) {
				t.Fatalf("%q and %q said disjoint, but both match %q", sa, sb, p)
			}
		}
	}
	if overlaps < 100 || disjoint < 100 {
		t.Errorf("the generator misses a side: %d overlapping pairs, %d disjoint", overlaps, disjoint)
	}
	t.Logf("%d overlapping pairs, %d disjoint", overlaps, disjoint)
}

func TestGlobsOverlapTable(t *testing.T) {
	for _, c := range []struct {
		a, b    string
		overlap bool
	}{
		{"web/**", "api/**", false},
		{"web/**", "web", true}, // web/** is inside web
		{"/web/**", "/web", true},
		{"web/**", "**/x.js", true},
		{"*.js", "*.go", true}, // unanchored: a directory x.js holding y.go
		{"/*.js", "/*.go", false},
		{"*.js", "a*", true},
		{"a/*/c", "a/b/*", true},
		{"a/*/c", "a/b/d", false},
		{"/a/**/c", "/a/c", true},
		{"/a/**/c", "/b/c", false},
		{"docs/", "docs", true},
		{"a?", "a", true}, // aa/a
		{"/a?", "/a", false},
		{"/?", "/ab", false},
		{"/x*y", "/*z", false},
		{"/x*y/", "/xy*", true},
		{"x*y", "x*", true},
		{"/src/a/**", "/src/b/**", false},
		{"src/a/**", "b/**", false}, // both anchored by their slashes
		{"a", "x/a/y", true},        // unanchored a: any component named a
	} {
		ga, err := CompilePathGlob(c.a)
		if err != nil {
			t.Fatal(err)
		}
		gb, err := CompilePathGlob(c.b)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := GlobsOverlap(ga, gb)
		if ok != c.overlap {
			t.Errorf("%q, %q: overlap %v (witness %q), want %v", c.a, c.b, ok, w, c.overlap)
		}
	}
}
