package policy

// Reading hub refs through the fold cache, for the CLI's read paths (`pr
// list`, `queue run`, the writing verbs' reads): docs/scale.md.
//
// The hook leaves in the fold cache, for every hub ref tip it accepts, the
// decoded and verified log (cache.go) and, for the trust tip, the folded
// trust state (truststate.go). A Reader reads those instead of reading and
// verifying every event again, and keeps one more entry, the pull request
// view, so that listing N pull requests reads one file and folds only the
// pull requests whose ref moved:
//
//	key:   the first 20 bytes of SHA-256("gitplus pr view v3\n" + trust tip)
//	entry: "gpvw" 3 | trust tip (20) | count |
//	       per pull request: ref | tip (20) | event count | folded state
//
// A folded state is a pure function of the pull request's log (its tip)
// and of the trust state (the trust tip), so a record whose ref and tip
// match the ref read now is exact; a record for another tip is folded again
// from the log at the tip read now, and refs that no longer exist are
// dropped. A pull request that cannot be read or folded is never recorded.
// Like every entry, the view is as trustworthy as the git directory that
// holds it (docs/foldcache.md); `git+ verify` never reads it.

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Reader reads hub logs, the trust state and pull requests through a fold
// cache. Cache may be nil (every read is then cold). Ceilings bound logs
// read from objects; logs found in the cache were admitted by the hook.
type Reader struct {
	Objects  storer.EncodedObjectStorer
	Cache    Cache
	Ceilings hubrefs.Ceilings
}

// Log returns the events reachable from tip in causal order: the cache's
// entry for tip, else read and verified from the objects (and then stored).
func (r *Reader) Log(tip plumbing.Hash) ([]hubrefs.Event, error) {
	if evs, _, ok := cachedLog(r.Cache, tip); ok {
		return evs, nil
	}
	c := r.Ceilings
	if c.EventsPerRef == 0 {
		c = storedCeilings
	}
	evs, err := hubrefs.ReadLog(r.Objects, tip, c)
	if err != nil {
		return nil, err
	}
	if r.Cache != nil {
		r.Cache.Put(tip, encodeLog(tip, evs))
	}
	return evs, nil
}

// Trust returns the trust state folded at trust tip tip.
func (r *Reader) Trust(tip plumbing.Hash) (*trust.State, error) {
	if r.Cache != nil {
		if b, ok := r.Cache.Get(trustStateKey(tip)); ok {
			if st, ok := decodeTrustState(tip, b); ok {
				return st, nil
			}
		}
	}
	evs, err := r.Log(tip)
	if err != nil {
		return nil, err
	}
	st, err := trust.Fold(evs)
	if err != nil {
		return nil, err
	}
	if r.Cache != nil {
		r.Cache.Put(trustStateKey(tip), encodeTrustState(st))
	}
	return st, nil
}

// PRFold is one pull request ref read by Reader.PRs: its state folded under
// the trust state given (read-only: it cannot Apply events), the number of
// events in its log, or the error that kept it from being read or folded.
type PRFold struct {
	Ref    string
	Tip    plumbing.Hash
	State  *pr.State
	Events int
	Err    error
}

// PRs folds every pull request ref of refs (refs/hub/pr/<id> → tip) under
// t, the trust state at trustTip, in ref order: from the pull request view
// of trustTip for refs still at the tip it records, else from the ref's log
// (through Log), and writes the view back when anything changed.
func (r *Reader) PRs(trustTip plumbing.Hash, t *trust.State, refs map[string]plumbing.Hash) []PRFold {
	var names []string
	for ref := range refs {
		if strings.HasPrefix(ref, hubrefs.PRRefPrefix) {
			names = append(names, ref)
		}
	}
	sort.Strings(names)
	var view map[string]prView
	if r.Cache != nil {
		if b, ok := r.Cache.Get(prViewKey(trustTip)); ok {
			view, _ = decodePRView(trustTip, b, freshGets(r.Cache))
		}
	}
	out := make([]PRFold, 0, len(names))
	changed := len(view) != len(names)
	for _, ref := range names {
		tip := refs[ref]
		if v, ok := view[ref]; ok && v.tip == tip {
			out = append(out, PRFold{Ref: ref, Tip: tip, State: v.st, Events: v.events})
			continue
		}
		changed = true
		f := PRFold{Ref: ref, Tip: tip}
		evs, err := r.Log(tip)
		if err == nil {
			f.Events = len(evs)
			f.State, err = pr.Fold(evs, t)
		}
		if err == nil && hubrefs.PRRefPrefix+f.State.ID != ref {
			err = fmt.Errorf("%s holds pull request %s", ref, f.State.ID)
		}
		if err != nil {
			f.State, f.Err = nil, err
		}
		out = append(out, f)
	}
	if changed && r.Cache != nil {
		r.Cache.Put(prViewKey(trustTip), encodePRView(trustTip, out))
	}
	return out
}

var prViewMagic = []byte("gpvw\x03")

// prViewKey is the cache key of the pull request view for trust tip t.
func prViewKey(t plumbing.Hash) plumbing.Hash { return derivedKey("gitplus pr view v3\n", t[:]) }

// prView is one record of the view.
type prView struct {
	tip    plumbing.Hash
	events int
	st     *pr.State
}

func appendKey(b []byte, k hubrefs.PublicKey) []byte {
	if k == nil {
		return appendBytes(b, nil)
	}
	return appendBytes(b, k.Marshal())
}

func encodePRView(t plumbing.Hash, folds []PRFold) []byte {
	// About the size of the entry: grown by appending, a 4.5 MB view at
	// 10,000 pull requests was copied a dozen times over.
	b := appendEntryHeader(make([]byte, 0, 64+512*len(folds)), prViewMagic, t)
	n := 0
	for _, f := range folds {
		if f.Err == nil {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for _, f := range folds {
		if f.Err != nil {
			continue
		}
		s := f.State
		b = appendBytes(b, []byte(f.Ref))
		b = append(b, f.Tip[:]...)
		b = binary.AppendVarint(b, int64(f.Events))
		for _, v := range []string{s.ID, s.State, s.Base, s.Head, s.Title, s.Body, s.Source, s.Opener.Name} {
			b = appendBytes(b, []byte(v))
		}
		b = appendKey(b, s.Opener.Key)
		b = appendStrings(b, s.Heads)
		b = appendStrings(b, s.Approvals)
		checks := make([]checkResult, 0, len(s.Checks))
		for k, c := range s.Checks {
			checks = append(checks, checkResult{k.Name, k.Revision, c, s.Confined[k]})
		}
		sort.Slice(checks, func(x, y int) bool {
			if checks[x].Name != checks[y].Name {
				return checks[x].Name < checks[y].Name
			}
			return checks[x].Revision < checks[y].Revision
		})
		b = binary.AppendUvarint(b, uint64(len(checks)))
		for _, c := range checks {
			b = appendBytes(b, []byte(c.Name))
			b = appendBytes(b, []byte(c.Revision))
			b = appendBytes(b, []byte(c.Conclusion))
			b = appendBytes(b, []byte(c.Confined))
		}
		threads := make([]string, 0, len(s.Threads))
		for th := range s.Threads {
			threads = append(threads, th)
		}
		sort.Strings(threads)
		b = binary.AppendUvarint(b, uint64(len(threads)))
		for _, th := range threads {
			b = appendBytes(b, []byte(th))
			if s.Threads[th] {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
		b = binary.AppendVarint(b, int64(s.UnresolvedThreads))
		b = binary.AppendUvarint(b, uint64(len(s.Reviews)))
		for _, rv := range s.Reviews {
			b = append(b, rv.Event[:]...)
			b = appendKey(b, rv.Key)
			b = appendBytes(b, []byte(rv.Head))
			b = appendBytes(b, []byte(rv.Base))
			b = appendBytes(b, []byte(rv.Verdict))
		}
		b = binary.AppendUvarint(b, uint64(len(s.Runs)))
		for _, run := range s.Runs {
			b = append(b, run.Event[:]...)
			b = appendKey(b, run.Key)
			b = appendBytes(b, []byte(run.Name))
			b = appendBytes(b, []byte(run.Revision))
			b = appendBytes(b, []byte(run.Conclusion))
			b = appendBytes(b, []byte(run.URL))
			b = appendBytes(b, []byte(run.Sandbox))
		}
		b = binary.AppendUvarint(b, uint64(len(s.Merged)))
		for _, m := range s.Merged {
			b = append(b, m.Event[:]...)
			b = appendBytes(b, []byte(m.Revision))
			b = appendBytes(b, []byte(m.Branch))
			b = appendBytes(b, []byte(m.Commit))
		}
		b = appendApprovalRules(b, s.Draft, s.ApproverTeams, s.Vetoes, s.Bypassed)
		b = binary.AppendUvarint(b, uint64(len(s.Bypasses)))
		for _, bp := range s.Bypasses {
			b = append(b, bp.Event[:]...)
			b = appendKey(b, bp.Key)
			for _, v := range []string{bp.Head, bp.Base, bp.Reason} {
				b = appendBytes(b, []byte(v))
			}
		}
		b = binary.AppendUvarint(b, uint64(len(s.Dismissals)))
		for _, d := range s.Dismissals {
			b = append(b, d.Event[:]...)
			b = appendKey(b, d.Key)
			b = append(b, d.Review[:]...)
			b = appendBytes(b, []byte(d.Reason))
		}
		b = append(b, s.Tip[:]...)
	}
	return b
}

// decodePRView returns the records of a view entry for trust tip t by ref,
// or false when the entry is damaged, of another kind or for another tip.
// With fresh, b is the caller's alone and never written again, and the
// records' strings are views of it (sharedStrings).
func decodePRView(t plumbing.Hash, b []byte, fresh bool) (map[string]prView, bool) {
	r, ok := openEntry(b, prViewMagic, t)
	if !ok {
		return nil, false
	}
	n := r.count(20 + 10)
	if r.bad {
		return nil, false
	}
	keys := hubrefs.KeyCache{}
	key := func() hubrefs.PublicKey {
		kb := r.bytes()
		if r.bad || len(kb) == 0 {
			return nil
		}
		k, err := keys.Parse(kb)
		if err != nil {
			r.bad = true
			return nil
		}
		return k
	}
	str, strs := sharedStrings(b, r, fresh)
	out := make(map[string]prView, n)
	for i := 0; i < n && !r.bad; i++ {
		ref := str()
		v := prView{tip: r.hash(), events: r.int(), st: &pr.State{}}
		s := v.st
		for _, dst := range []*string{&s.ID, &s.State, &s.Base, &s.Head, &s.Title, &s.Body, &s.Source, &s.Opener.Name} {
			*dst = str()
		}
		s.Opener.Key = key()
		s.Heads = strs()
		s.Approvals = strs()
		nc := r.count(4)
		s.Checks = make(map[pr.CheckKey]string, nc)
		for k := 0; k < nc && !r.bad; k++ {
			ck := pr.CheckKey{Name: str(), Revision: str()}
			s.Checks[ck] = str()
			if c := str(); c != "" {
				if s.Confined == nil {
					s.Confined = map[pr.CheckKey]string{}
				}
				s.Confined[ck] = c
			}
		}
		nt := r.count(2)
		s.Threads = make(map[string]bool, nt)
		for k := 0; k < nt && !r.bad; k++ {
			th := str()
			flag := r.bytesN(1)
			s.Threads[th] = len(flag) == 1 && flag[0] == 1
		}
		s.UnresolvedThreads = r.int()
		if nr := r.count(20 + 4); nr > 0 {
			s.Reviews = make([]pr.Review, nr)
			for k := range s.Reviews {
				s.Reviews[k] = pr.Review{Event: r.hash(), Key: key(), Head: str(), Base: str(), Verdict: str()}
			}
		}
		if nr := r.count(20 + 7); nr > 0 {
			s.Runs = make([]pr.CheckRun, nr)
			for k := range s.Runs {
				s.Runs[k] = pr.CheckRun{Event: r.hash(), Key: key(), Name: str(), Revision: str(), Conclusion: str(), URL: str(), Sandbox: str()}
			}
		}
		if nm := r.count(20 + 3); nm > 0 {
			s.Merged = make([]pr.MergedRecord, nm)
			for k := range s.Merged {
				s.Merged[k] = pr.MergedRecord{Event: r.hash(), Revision: str(), Branch: str(), Commit: str()}
			}
		}
		s.Draft, s.ApproverTeams, s.Vetoes, s.Bypassed = readApprovalRules(r, str, strs)
		if nb := r.count(20 + 4); nb > 0 {
			s.Bypasses = make([]pr.Bypass, nb)
			for k := range s.Bypasses {
				s.Bypasses[k] = pr.Bypass{Event: r.hash(), Key: key(), Head: str(), Base: str(), Reason: str()}
			}
		}
		if nd := r.count(20 + 1 + 20 + 1); nd > 0 {
			s.Dismissals = make([]pr.Dismissal, nd)
			for k := range s.Dismissals {
				s.Dismissals[k] = pr.Dismissal{Event: r.hash(), Key: key(), Review: r.hash(), Reason: str()}
			}
		}
		s.Tip = r.hash()
		if r.bad || ref == "" || v.tip.IsZero() || s.Tip != v.tip {
			return nil, false
		}
		if _, dup := out[ref]; dup {
			return nil, false
		}
		out[ref] = v
	}
	if r.bad || len(r.b) != 0 {
		return nil, false
	}
	return out, true
}

// sharedStrings returns readers of a string and of a list of strings from
// r, which reads a suffix of entry b, that share one copy of b: a view of
// 10,000 pull requests then decodes with one string allocation instead of
// one per field (the strings keep the copy alive, as long as the states
// that hold them). With fresh (a FreshCache's buffer: the caller's alone,
// never written again) they share b itself, and nothing is copied: at
// 10,000 entries the view and the queue state are 5.7 MB.
func sharedStrings(b []byte, r *entryReader, fresh bool) (str func() string, strs func() []string) {
	var whole string
	if fresh && len(b) > 0 {
		whole = unsafe.String(unsafe.SliceData(b), len(b))
	} else {
		whole = string(b)
	}
	str = func() string {
		v := r.bytes()
		if r.bad {
			return ""
		}
		end := len(b) - len(r.b)
		return whole[end-len(v) : end]
	}
	strs = func() []string {
		n := r.count(1)
		if r.bad || n == 0 {
			return nil
		}
		out := make([]string, n)
		for i := range out {
			out[i] = str()
		}
		return out
	}
	return str, strs
}

// flag reads a byte that must be 0 (false) or 1 (true).
func (r *entryReader) flag() bool {
	v := r.bytesN(1)
	if len(v) == 1 && v[0] > 1 {
		r.bad = true
	}
	return len(v) == 1 && v[0] == 1
}

// bytesN reads n raw bytes.
func (r *entryReader) bytesN(n int) []byte {
	if r.bad || len(r.b) < n {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
