package policy

// The pull request index (docs/foldcache.md). A branch push needs, of
// every pull request, its id, state, base and head — to find the open pull
// requests whose head is the pushed commit or a candidate's second parent —
// and of just those, the approvals, unresolved threads and check
// conclusions the rules look at. The index keeps that summary per pull
// request ref and tip, for one trust tip, in the fold cache, so a warm push
// reads no pull request log at all:
//
//	key:   the first 20 bytes of SHA-256("gitplus pr index v4\n" + trust tip)
//	entry: "gpix" 4 | trust tip (20) | count |
//	       per pull request: ref | tip (20) | id | state | base | head |
//	       approval count | approvals | unresolved threads |
//	       check count | per check: name | revision | conclusion |
//	       conclusion among confined runs ("" when none: requireSandbox) |
//	       draft (one byte) | team count | per approver in a team: name | teams |
//	       veto count | vetoes |
//	       bypass count | per bypass counting: event (20) | by | head | base | reason
//
// (strings as in the log entries of cache.go: a varint length, the bytes).
// A summary is a pure function of the pull request's log (its tip) and the
// trust state (the trust tip), so an entry whose ref and tip match the ref
// read now is exact; others are folded again and the entry rewritten, with
// refs that no longer exist dropped. A pull request that cannot be read or
// folded is never indexed.
//
// The open index is the same for the open pull requests alone, under
// SHA-256("gitplus open pr index v4\n" + trust tip) with magic "gpio" 4 (a base
// and patches, indexpatch.go):
// what a landing judged from the index reads (Input.PRRefs), so that its
// cost follows the pull requests open, not every one ever opened (a
// repository with 10,000 merged pull requests has a full index of about
// 2.3 MB, 7.6 ms to decode). Both are written whenever every pull request
// ref is read; an accepted push that moves pull request refs updates the
// open index only (flushIndex).

import (
	"crypto/sha256"
	"encoding/binary"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
)

// prSummary is what the index keeps of one pull request.
type prSummary struct {
	Ref        string
	Tip        plumbing.Hash
	ID         string
	State      string
	Base       string
	Head       string
	Approvals  []string
	Unresolved int
	Checks     []checkResult // sorted by name, then revision
	// What "approvers", drafts and vetoes read (pr.State.ReviewAt).
	Draft         bool
	ApproverTeams map[string][]string
	Vetoes        []string
	Bypassed      []pr.Bypass
}

// checkResult is a check's latest conclusion at a revision, and its latest
// among runs that ran confined (pr.State.Confined; "" when none).
type checkResult struct{ Name, Revision, Conclusion, Confined string }

func summarize(ref string, tip plumbing.Hash, st *pr.State) prSummary {
	s := prSummary{Ref: ref, Tip: tip, ID: st.ID, State: st.State, Base: st.Base, Head: st.Head,
		Approvals: st.Approvals, Unresolved: st.UnresolvedThreads,
		Draft: st.Draft, ApproverTeams: st.ApproverTeams, Vetoes: st.Vetoes, Bypassed: st.Bypassed}
	for k, c := range st.Checks {
		s.Checks = append(s.Checks, checkResult{k.Name, k.Revision, c, st.Confined[k]})
	}
	sort.Slice(s.Checks, func(a, b int) bool {
		if s.Checks[a].Name != s.Checks[b].Name {
			return s.Checks[a].Name < s.Checks[b].Name
		}
		return s.Checks[a].Revision < s.Checks[b].Revision
	})
	return s
}

// state is the pull request state the branch rules read (review and
// checks): id, state, base, head, approvals (with the approvers' teams),
// unresolved threads, check conclusions, draft and vetoes. Nothing else of a pr.State is filled in.
func (s prSummary) state() *pr.State {
	st := &pr.State{ID: s.ID, State: s.State, Base: s.Base, Head: s.Head, Approvals: s.Approvals,
		UnresolvedThreads: s.Unresolved, Checks: make(map[pr.CheckKey]string, len(s.Checks)),
		Draft: s.Draft, ApproverTeams: s.ApproverTeams, Vetoes: s.Vetoes, Bypassed: s.Bypassed}
	for _, c := range s.Checks {
		st.Checks[pr.CheckKey{Name: c.Name, Revision: c.Revision}] = c.Conclusion
		if c.Confined != "" {
			if st.Confined == nil {
				st.Confined = map[pr.CheckKey]string{}
			}
			st.Confined[pr.CheckKey{Name: c.Name, Revision: c.Revision}] = c.Confined
		}
	}
	return st
}

var (
	indexMagic     = []byte("gpix\x04")
	openIndexMagic = []byte("gpio\x04")
)

// indexKey is the cache key of the index for trust tip t.
func indexKey(t plumbing.Hash) plumbing.Hash {
	return derivedKey("gitplus pr index v4\n", t[:])
}

// openIndexKey is the cache key of the open index for trust tip t.
func openIndexKey(t plumbing.Hash) plumbing.Hash {
	return derivedKey("gitplus open pr index v4\n", t[:])
}

// derivedKey is the fold-cache key of an entry kind for the ids in parts:
// the first 20 bytes of SHA-256(prefix + parts...), where prefix names the
// kind and its version.
func derivedKey(prefix string, parts ...[]byte) plumbing.Hash {
	h := sha256.New()
	h.Write([]byte(prefix))
	for _, p := range parts {
		h.Write(p)
	}
	var k plumbing.Hash
	copy(k[:], h.Sum(nil))
	return k
}

func encodeIndex(t plumbing.Hash, sums []prSummary) []byte { return encodeIndexAs(indexMagic, t, sums) }

func decodeIndex(t plumbing.Hash, b []byte) (map[string]prSummary, bool) {
	return decodeIndexAs(indexMagic, t, b)
}

// openSummaries returns the summaries of open pull requests, in order.
func openSummaries(sums []prSummary) []prSummary {
	var open []prSummary
	for _, s := range sums {
		if s.State == pr.Open {
			open = append(open, s)
		}
	}
	return open
}

func encodeIndexAs(magic []byte, t plumbing.Hash, sums []prSummary) []byte {
	b := appendEntryHeader(nil, magic, t)
	b = binary.AppendUvarint(b, uint64(len(sums)))
	for _, s := range sums {
		b = appendBytes(b, []byte(s.Ref))
		b = append(b, s.Tip[:]...)
		b = appendBytes(b, []byte(s.ID))
		b = appendBytes(b, []byte(s.State))
		b = appendBytes(b, []byte(s.Base))
		b = appendBytes(b, []byte(s.Head))
		b = binary.AppendUvarint(b, uint64(len(s.Approvals)))
		for _, a := range s.Approvals {
			b = appendBytes(b, []byte(a))
		}
		b = binary.AppendUvarint(b, uint64(s.Unresolved))
		b = binary.AppendUvarint(b, uint64(len(s.Checks)))
		for _, c := range s.Checks {
			b = appendBytes(b, []byte(c.Name))
			b = appendBytes(b, []byte(c.Revision))
			b = appendBytes(b, []byte(c.Conclusion))
			b = appendBytes(b, []byte(c.Confined))
		}
		b = appendApprovalRules(b, s.Draft, s.ApproverTeams, s.Vetoes, s.Bypassed)
	}
	return b
}

// appendApprovalRules appends what a pull request's fold judged for
// "approvers", drafts, vetoes and bypasses: draft (one byte, 0 or 1), the
// approvers' teams (count | per approver, by name: name | teams), the
// vetoes and the bypasses that count (count | per bypass: event | by |
// head | base | reason).
func appendApprovalRules(b []byte, draft bool, teams map[string][]string, vetoes []string, bypassed []pr.Bypass) []byte {
	if draft {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	names := make([]string, 0, len(teams))
	for n := range teams {
		names = append(names, n)
	}
	sort.Strings(names)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = appendBytes(b, []byte(n))
		b = appendStrings(b, teams[n])
	}
	b = appendStrings(b, vetoes)
	b = binary.AppendUvarint(b, uint64(len(bypassed)))
	for _, bp := range bypassed {
		b = append(b, bp.Event[:]...)
		for _, v := range []string{bp.By, bp.Head, bp.Base, bp.Reason} {
			b = appendBytes(b, []byte(v))
		}
	}
	return b
}

// readApprovalRules reads what appendApprovalRules wrote.
func readApprovalRules(r *entryReader, str func() string, strs func() []string) (draft bool, teams map[string][]string, vetoes []string, bypassed []pr.Bypass) {
	flag := r.bytesN(1)
	if len(flag) != 1 || flag[0] > 1 {
		r.bad = true
		return
	}
	draft = flag[0] == 1
	if n := r.count(2); n > 0 {
		teams = make(map[string][]string, n)
		for i := 0; i < n && !r.bad; i++ {
			name := str()
			ts := strs()
			if _, dup := teams[name]; dup || len(ts) == 0 {
				r.bad = true
				return
			}
			teams[name] = ts
		}
	}
	vetoes = strs()
	if n := r.count(20 + 4); n > 0 {
		bypassed = make([]pr.Bypass, n)
		for i := range bypassed {
			bypassed[i] = pr.Bypass{Event: r.hash(), By: str(), Head: str(), Base: str(), Reason: str()}
		}
	}
	return
}

// decodeIndexAs returns the summaries of an index entry for trust tip t by
// ref, or false when the entry is damaged, of another kind or for another
// trust tip.
func decodeIndexAs(magic []byte, t plumbing.Hash, b []byte) (map[string]prSummary, bool) {
	r, ok := openEntry(b, magic, t)
	if !ok {
		return nil, false
	}
	n := r.count(20 + 5)
	if r.bad {
		return nil, false
	}
	out := make(map[string]prSummary, n)
	for i := 0; i < n; i++ {
		var s prSummary
		s.Ref = string(r.bytes())
		s.Tip = r.hash()
		s.ID = string(r.bytes())
		s.State = string(r.bytes())
		s.Base = string(r.bytes())
		s.Head = string(r.bytes())
		if na := r.count(1); na > 0 {
			s.Approvals = make([]string, na)
			for k := range s.Approvals {
				s.Approvals[k] = string(r.bytes())
			}
		}
		unresolved := r.uvarint()
		if unresolved > 1<<31 {
			return nil, false
		}
		s.Unresolved = int(unresolved)
		if nc := r.count(4); nc > 0 {
			s.Checks = make([]checkResult, nc)
			for k := range s.Checks {
				s.Checks[k] = checkResult{string(r.bytes()), string(r.bytes()), string(r.bytes()), string(r.bytes())}
			}
		}
		s.Draft, s.ApproverTeams, s.Vetoes, s.Bypassed = readApprovalRules(r, func() string { return string(r.bytes()) }, r.strings)
		if r.bad || s.Ref == "" || s.Tip.IsZero() {
			return nil, false
		}
		if _, dup := out[s.Ref]; dup {
			return nil, false
		}
		out[s.Ref] = s
	}
	if len(r.b) != 0 {
		return nil, false
	}
	return out, true
}
