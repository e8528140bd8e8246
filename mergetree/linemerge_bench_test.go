package mergetree

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// lmSourceLike returns n lines that look like source code: many distinct
// lines plus frequent blank lines, braces and returns.
func lmSourceLike(r *rand.Rand, n int) []string {
	common := []string{"\n", "\n", "\n", "}\n", "\t}\n", "\t\treturn err\n", "\treturn nil\n", "\t}\n\n"}
	out := make([]string, n)
	for i := range out {
		if r.IntN(3) == 0 {
			out[i] = common[r.IntN(len(common))]
		} else {
			out[i] = fmt.Sprintf("\tv%d := f(x%d, %q)\n", r.IntN(n), r.IntN(50), "s")
		}
	}
	return out
}

// lmEditRange makes k random small edits within [lo, hi) of lines.
func lmEditRange(r *rand.Rand, lines []string, k, lo, hi int) []string {
	out := append([]string(nil), lines...)
	for range k {
		p := lo + r.IntN(hi-lo-4)
		out[p] = fmt.Sprintf("\tedited%d()\n", r.IntN(1000))
		if r.IntN(2) == 0 {
			out = append(out[:p+1], append([]string{"\t// new\n"}, out[p+1:]...)...)
		}
	}
	return out
}

func lmBenchMerge(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(7, 7))
	lines := lmSourceLike(r, n)
	base := []byte(strings.Join(lines, ""))
	ours := []byte(strings.Join(lmEditRange(r, lines, 5, 0, n/2-10), ""))
	theirs := []byte(strings.Join(lmEditRange(r, lines, 5, n/2+10, n), ""))
	if _, clean := MergeFile(base, ours, theirs); !clean {
		b.Fatal("benchmark merge conflicts")
	}
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	for b.Loop() {
		MergeFile(base, ours, theirs)
	}
}

// BenchmarkMergeFile merges a source-sized file (1,000 lines) with a few
// edits on each side, far apart.
func BenchmarkMergeFile(b *testing.B) {
	b.Run("1k", func(b *testing.B) { lmBenchMerge(b, 1000) })
	b.Run("20k", func(b *testing.B) { lmBenchMerge(b, 20000) })
}
