package queuerun

// The figures of every target at once, memoised (docs/operating.md,
// "Metrics"): what `git+ serve`'s /metrics and the page's charts read. They
// are a function of the hub refs (the trust log and its rules, every queue
// and pull request log, each named by its tip) and of the code that counts
// them, so the fold cache keeps the last answer under a digest of exactly
// those, as the idle pass memo and the `pr list` memo do (docs/scale.md): a
// scrape over unchanged refs reads the refs and one cache entry.
//
//	key:    the first 20 bytes of SHA-256("gitplus queue stats memo v1\n")
//	entry:  "gpqs" 1 | digest (32) | the figures as JSON
//	digest: receive.RefsDigest over the prefix, the build and every ref
//	        under refs/hub/
//
// An entry of another digest or layout, or one that does not decode, is a
// miss. Without a build id (receive.BuildID) nothing is memoised. Like every
// fold cache entry it is trusted as the git directory is (docs/foldcache.md).

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
)

var statsMagic = []byte("gpqs\x01")

const statsPrefix = "gitplus queue stats memo v1\n"

// AllStats is Stats (since 0) of every target some queue of the repository
// at gitDir lands on, in target order, through the memo above. trustOf
// reads the repository's trust state; it is called only on a miss.
func AllStats(gitDir string, trustOf func() (*trust.State, error)) ([]queue.Stats, error) {
	refs, err := receive.ReadRefsUnder(gitDir, []string{"refs/hub/"}, nil)
	if err != nil {
		return nil, fmt.Errorf("listing refs in %s: %w", gitDir, err)
	}
	id := buildID()
	var digest [32]byte
	var key plumbing.Hash
	cache := receive.NewDirCache(gitDir)
	if id != nil {
		digest = receive.RefsDigest([]string{statsPrefix, string(id)}, refs)
		sum := sha256.Sum256([]byte(statsPrefix))
		copy(key[:], sum[:])
		if b, ok := cache.Get(key); ok && len(b) >= len(statsMagic)+len(digest) &&
			bytes.Equal(b[:len(statsMagic)], statsMagic) && bytes.Equal(b[len(statsMagic):len(statsMagic)+len(digest)], digest[:]) {
			var out []queue.Stats
			if json.Unmarshal(b[len(statsMagic)+len(digest):], &out) == nil {
				return out, nil
			}
		}
	}
	t, err := trustOf()
	if err != nil {
		return nil, err
	}
	queues, prs, err := ReadQueueAndPRLogs(gitDir, t)
	if err != nil {
		return nil, err
	}
	targets := map[string]bool{}
	for _, evs := range queues {
		if q, err := queue.Fold(evs, t); err == nil && q.Target != "" {
			targets[q.Target] = true
		}
	}
	names := make([]string, 0, len(targets))
	for n := range targets {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]queue.Stats, 0, len(names))
	for _, n := range names {
		out = append(out, queue.ComputeStats(n, 0, t, queues, prs))
	}
	if id != nil {
		if b, err := json.Marshal(out); err == nil {
			cache.Put(key, append(append(append([]byte{}, statsMagic...), digest[:]...), b...))
		}
	}
	return out, nil
}
