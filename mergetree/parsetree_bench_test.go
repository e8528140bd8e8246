package mergetree

import (
	"fmt"
	"testing"
)

// BenchmarkParseTree decodes a 1000-entry tree (names like a source
// tree's, a few dot-files): the hot path of every merge.
func BenchmarkParseTree(b *testing.B) {
	var es []entry
	for i := 0; i < 1000; i++ {
		e := entry{name: fmt.Sprintf("file_%04d.go", i), mode: modeFile}
		switch i % 50 {
		case 0:
			e = entry{name: fmt.Sprintf(".config%d", i), mode: modeFile}
		case 1:
			e = entry{name: fmt.Sprintf("dir%d", i), mode: modeTree}
		}
		e.id[0], e.id[1] = byte(i), byte(i>>8)
		e.id[19] = 1
		es = append(es, e)
	}
	raw := encodeTree(es)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseTree(raw); err != nil {
			b.Fatal(err)
		}
	}
}
