package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
)

// BenchmarkLandingManyPRs: a direct landing in a repository holding, beside
// the open pull request landed, n merged ones (their summaries indexed, as
// a server that has judged them holds them). "every-ref" judges as the hook
// did before pull request refs were read on demand: every ref known, the
// full index decoded; "on-demand" as it does now: the open index and the
// one ref it names.
func BenchmarkLandingManyPRs(b *testing.B) {
	for _, n := range []int{0, 1000, 10000} {
		w := newWorld(b, rulesNoQueue)
		p := w.ready(w.commit(w.c0, "a", "a\n"))
		u := up(main, w.c0, p.head)
		cache := &mapCache{m: map[plumbing.Hash][]byte{}}
		Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}, Cache: cache}) // fills the cache
		trustTip := w.refs[hubrefs.TrustRef]
		idx, _ := decodeIndex(trustTip, cache.m[indexKey(trustTip)])
		all := map[string]plumbing.Hash{}
		for ref, id := range w.refs {
			all[ref] = id
		}
		sums := []prSummary{}
		for _, s := range idx {
			sums = append(sums, s)
		}
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("01900000-0000-7000-9000-%012x", i)
			s := prSummary{Ref: hubrefs.PRRefPrefix + id, Tip: plumbing.NewHash(fmt.Sprintf("%040x", i+1)), ID: id, State: pr.Merged,
				Base: main, Head: fmt.Sprintf("%040x", i+7), Approvals: []string{"bob"}, Checks: []checkResult{{"ci", fmt.Sprintf("%040x", i+7), "success", ""}}}
			sums = append(sums, s)
			all[s.Ref] = s.Tip
		}
		cache.m[indexKey(trustTip)] = encodeIndex(trustTip, sums)
		onDemand := map[string]plumbing.Hash{}
		for ref, id := range all {
			if !strings.HasPrefix(ref, hubrefs.PRRefPrefix) {
				onDemand[ref] = id
			}
		}
		b.Run(fmt.Sprintf("merged=%d/every-ref", n), func(b *testing.B) {
			for range b.N {
				if v := Judge(Input{Objects: GoGitObjects(w.store), Refs: all, Updates: []Update{u}, Cache: cache}); !v[0].Accepted() {
					b.Fatal(v[0])
				}
			}
		})
		b.Run(fmt.Sprintf("merged=%d/on-demand", n), func(b *testing.B) {
			src := &refSource{m: all}
			for range b.N {
				if v := Judge(Input{Objects: GoGitObjects(w.store), Refs: onDemand, Updates: []Update{u}, Cache: cache, PRRefs: src}); !v[0].Accepted() {
					b.Fatal(v[0])
				}
			}
			if src.alls != 0 {
				b.Fatalf("read every pull request ref %d times", src.alls)
			}
		})
	}
}
