package receive

// BenchmarkCertRecord: the cost of recording a used push certificate and
// the size of the record directory under load (docs/serving.md "Replayed
// certificates"). Run:
//
//	go test ./receive -run '^$' -bench CertRecord -benchtime 300x
//
//   - live=N: one push's record (useCert) with N live records already in
//     the directory; ns/op stays flat in N, because no push lists the
//     records (the former layout listed all of them on every push:
//     list=N measures that listing alone).
//   - steady: b.N members' pushes, one every 30 s of simulated time (300
//     pushes span 2.5 hours), each with its own nonce time; reports the most records ever on disk (records-max)
//     and the bound (records-bound: the pushes of certRecordTTL + 3
//     buckets), and the time per push including the sweeps.
//   - loose-blob: writing the same certificate bytes as a loose blob, as
//     receive-pack does with every certificate it receives (our writer of
//     git's loose format, in process: a git process per write would
//     measure process start). The ratio of steady to loose-blob is what
//     the record adds to what git already does per signed push.

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
)

// benchCert is the i-th certificate of a benchmark, nonce at at.
func benchCert(i int, at time.Time) *PushCert {
	text := fmt.Appendf(nil, "certificate version 0.1\npusher dev 1800000000 +0000\npushee http://h/r.git\nnonce %s\n\n%040x %040x refs/heads/b%d\n",
		nonceAt(at, "5c40fe4eb2f275d0d87f6464755bdec478fe717a"), i, i+1, i)
	return &PushCert{Signed: text, Nonce: nonceAt(at, "5c40fe4eb2f275d0d87f6464755bdec478fe717a")}
}

func BenchmarkCertRecord(b *testing.B) {
	now := time.Now()
	for _, live := range []int{0, 1000, 10000} {
		b.Run(fmt.Sprintf("live=%d", live), func(b *testing.B) {
			dir := b.TempDir()
			for i := 0; i < live; i++ {
				if err := useCert(dir, benchCert(-1-i, now), true, now); err != nil {
					b.Fatal(err)
				}
			}
			certs := make([]*PushCert, b.N)
			for i := range certs {
				certs[i] = benchCert(i, now)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := useCert(dir, certs[i], true, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("list=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			for i := 0; i < n; i++ {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%064x", i)), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				entries, err := os.ReadDir(dir)
				if err != nil {
					b.Fatal(err)
				}
				for _, e := range entries {
					if _, err := e.Info(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	b.Run("steady", func(b *testing.B) {
		dir := b.TempDir()
		root := filepath.Join(dir, filepath.FromSlash(certDir))
		const every = 30 * time.Second
		start := time.Unix(1_800_000_000, 0)
		certs := make([]*PushCert, b.N)
		for i := range certs {
			certs[i] = benchCert(i, start.Add(time.Duration(i)*every))
		}
		most := 0
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			at := start.Add(time.Duration(i) * every)
			if err := useCert(dir, certs[i], true, at); err != nil {
				b.Fatal(err)
			}
			if i%100 == 99 || i == b.N-1 {
				b.StopTimer()
				most = max(most, countRecords(b, root))
				b.StartTimer()
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(most), "records-max")
		b.ReportMetric(float64((certRecordTTL+3*certBucket)/every+1), "records-bound")
		b.ReportMetric(float64(b.N), "pushes")
	})
	b.Run("loose-blob", func(b *testing.B) {
		dir := b.TempDir()
		fixtures.GitRaw(b, dir, nil, "init", "-q", "--bare")
		st, err := OpenStore(dir, QuarantineEnv{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		certs := make([][]byte, b.N)
		for i := range certs {
			certs[i] = benchCert(i, now).Signed
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := st.WriteRaw(plumbing.BlobObject, certs[i]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
