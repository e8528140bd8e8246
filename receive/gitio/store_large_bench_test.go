package gitio

import (
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
)

// BenchmarkReadLargeLoose: ReadRaw of one loose blob of random bytes of
// 25, 50 and 100 MiB (as `git hash-object -w` writes it): time and bytes
// allocated should grow linearly with the size.
func BenchmarkReadLargeLoose(b *testing.B) {
	for _, mib := range []int{25, 50, 100} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			dir := b.TempDir()
			fixtures.GitRaw(b, dir, nil, "init", "-q", "--bare")
			content := noise(mib<<20, uint64(mib))
			id := plumbing.NewHash(string(fixtures.GitRaw(b, dir, content, "hash-object", "-w", "--stdin")[:40]))
			s, err := OpenStore(dir, QuarantineEnv{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, data, err := s.ReadRaw(id); err != nil || len(data) != mib<<20 {
					b.Fatalf("%v, %d bytes", err, len(data))
				}
			}
		})
	}
}
