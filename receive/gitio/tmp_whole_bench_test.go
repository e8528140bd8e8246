package gitio

import "testing"

func BenchmarkTmpWhole(b *testing.B) {
	zs, sizes := benchCommits(b, 1000)
	for _, v := range []struct {
		name string
		f    func([]byte, int64) ([]byte, error)
	}{{"own", func(s []byte, n int64) ([]byte, error) { return inflateUntil(s, n, false) }}, {"zlib", inflate}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k := i % len(zs)
				if _, err := v.f(zs[k], sizes[k]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
