package policy

// The folded trust state in the fold cache (docs/foldcache.md). Folding
// the trust log decodes every event's JSON payload, so its cost grows with
// the log (every member ever added, every rules change) and a push paid it
// each time. The state folded at a trust tip is a pure function of the log
// at that tip, so it is kept under a key derived from the tip:
//
//	key:   the first 20 bytes of SHA-256("gitplus trust state v9\n" + trust tip)
//	entry: "gpts" 8 | trust tip (20) | repo id | name | rules id (20) |
//	       member count | per member: name | key line | cap count | caps |
//	       team count | per team: name | member count | members |
//	       branch count | per branch: pattern | flags | flags2 | approvals | depth |
//	       check timeout (nanoseconds) | check every |
//	       check count + 1 (0: none) | checks |
//	       approver count + 1 (0: none) | approvers |
//	       owner count | per owner: approvals | path count | paths |
//	       approver count | approvers |
//	       partition count | per partition: name | path count | paths |
//	       read count | reads |
//	       events per ref | event bytes | parents per event |
//	       skipped count | per skip: id (20) | type | reason |
//	       requireKnownPusher (one byte: 0 absent, 1 false, 2 true)
//
// (strings as in the log entries of cache.go; flags one byte, bit 0
// requirePullRequest, 1 requireResolvedThreads, 2 requireProvenance, 3
// queueCandidates, 4 blockOnChangesRequested, 5 allowBypass false, 6
// requireLinearHistory, 7 mergeMethod squash; flags2 bit 0
// deleteSourceBranch, bit 1 requireSandbox; integers signed varints).
// Keys are parsed from their
// lines as the fold parses them. An entry that does not decode, or decodes
// to a state for another tip, is a miss and the log is folded. Like every
// fold-cache entry it is exactly as trustworthy as the git directory that
// holds it. TestTrustStateCodecCoversEveryField fails when the state gains
// a field this encoding does not carry.

import (
	"encoding/binary"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

var trustStateMagic = []byte("gpts\x09")

// trustStateKey is the cache key of the state folded at trust tip t.
func trustStateKey(t plumbing.Hash) plumbing.Hash {
	return derivedKey("gitplus trust state v9\n", t[:])
}

const (
	flagRequirePR = 1 << iota
	flagResolvedThreads
	flagProvenance
	flagQueueCandidates
	flagBlockOnChanges
	flagForbidBypass
	flagLinearHistory
	flagSquash
)

// The bits of a branch's second flags byte (flags2).
const (
	flag2DeleteSourceBranch = 1 << iota
	flag2RequireSandbox
)

func sandboxFlag2(require bool) byte {
	if require {
		return flag2RequireSandbox
	}
	return 0
}

func encodeTrustState(st *trust.State) []byte {
	b := appendEntryHeader(make([]byte, 0, 512), trustStateMagic, st.Tip)
	b = appendBytes(b, []byte(st.RepoID))
	b = appendBytes(b, []byte(st.Name))
	b = append(b, st.RulesID[:]...)
	names := make([]string, 0, len(st.Members))
	for name := range st.Members {
		names = append(names, name)
	}
	sort.Strings(names)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		m := st.Members[name]
		b = appendBytes(b, []byte(m.Name))
		b = appendBytes(b, []byte(m.KeyLine))
		b = appendStrings(b, m.Caps)
	}
	teams := st.TeamNames()
	b = binary.AppendUvarint(b, uint64(len(teams)))
	for _, t := range teams {
		b = appendBytes(b, []byte(t))
		b = appendStrings(b, st.Teams[t])
	}
	patterns := make([]string, 0, len(st.Rules.Protected))
	for p := range st.Rules.Protected {
		patterns = append(patterns, p)
	}
	sort.Strings(patterns)
	b = binary.AppendUvarint(b, uint64(len(patterns)))
	for _, p := range patterns {
		br := st.Rules.Protected[p]
		b = appendBytes(b, []byte(p))
		var f byte
		if br.RequirePullRequest {
			f |= flagRequirePR
		}
		if br.RequireResolvedThreads {
			f |= flagResolvedThreads
		}
		if br.RequireProvenance {
			f |= flagProvenance
		}
		if br.QueueCandidates {
			f |= flagQueueCandidates
		}
		if br.BlockOnChangesRequested {
			f |= flagBlockOnChanges
		}
		if br.ForbidBypass {
			f |= flagForbidBypass
		}
		f |= landingFlags(br.Landing)
		b = append(b, f, landingFlags2(br.Landing)|sandboxFlag2(br.RequireSandbox))
		b = binary.AppendVarint(b, int64(br.RequiredApprovals))
		b = binary.AppendVarint(b, int64(br.QueueDepth))
		b = binary.AppendVarint(b, int64(br.CheckTimeout))
		b = binary.AppendVarint(b, int64(br.CheckEvery))
		if br.RequiredChecks == nil {
			b = binary.AppendUvarint(b, 0)
		} else {
			b = binary.AppendUvarint(b, uint64(len(br.RequiredChecks))+1)
			for _, c := range br.RequiredChecks {
				b = appendBytes(b, []byte(c))
			}
		}
		if br.Approvers == nil {
			b = binary.AppendUvarint(b, 0)
		} else {
			b = binary.AppendUvarint(b, uint64(len(br.Approvers))+1)
			for _, a := range br.Approvers {
				b = appendBytes(b, []byte(a))
			}
		}
		b = appendOwners(b, br.Owners)
		b = appendPartitions(b, br.Partitions)
	}
	c := st.Rules.Ceilings
	for _, v := range []int{c.EventsPerRef, c.EventBytes, c.ParentsPerEvent} {
		b = binary.AppendVarint(b, int64(v))
	}
	b = binary.AppendUvarint(b, uint64(len(st.Skipped)))
	for _, s := range st.Skipped {
		b = append(b, s.ID[:]...)
		b = appendBytes(b, []byte(s.Type))
		b = appendBytes(b, []byte(s.Reason))
	}
	var rkp byte
	if v := st.Rules.RequireKnownPusher; v != nil {
		rkp = 1
		if *v {
			rkp = 2
		}
	}
	return append(b, rkp)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendBytes(b, []byte(s))
	}
	return b
}

func (r *entryReader) strings() []string {
	n := r.count(1)
	if r.bad || n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = string(r.bytes())
	}
	return out
}

func (r *entryReader) int() int {
	v := r.varint()
	if v != int64(int(v)) {
		r.bad = true
	}
	return int(v)
}

// decodeTrustState returns the state an entry records for trust tip t, or
// false when the entry is damaged or for another tip.
func decodeTrustState(t plumbing.Hash, b []byte) (*trust.State, bool) {
	r, ok := openEntry(b, trustStateMagic, t)
	if !ok {
		return nil, false
	}
	st := &trust.State{Tip: t, RepoID: string(r.bytes()), Name: string(r.bytes()), RulesID: r.hash()}
	n := r.count(3)
	st.Members = make(map[string]*trust.Member, n)
	for i := 0; i < n && !r.bad; i++ {
		name, line := string(r.bytes()), string(r.bytes())
		caps := r.strings()
		if r.bad {
			break
		}
		key, _, err := hubrefs.ParseAuthorizedKeyLine(line)
		if err != nil || hubrefs.AuthorizedKey(key) != line || name == "" || st.Members[name] != nil {
			return nil, false
		}
		st.Members[name] = trust.NewMember(name, key, line, caps)
	}
	n = r.count(2)
	if n > 0 {
		st.Teams = make(map[string][]string, n)
	}
	for i := 0; i < n && !r.bad; i++ {
		name := string(r.bytes())
		members := r.strings()
		if members == nil {
			members = []string{}
		}
		if _, dup := st.Teams[name]; dup || name == "" {
			return nil, false
		}
		st.Teams[name] = members
	}
	n = r.count(5)
	st.Rules.Protected = make(map[string]trust.Branch, n)
	for i := 0; i < n && !r.bad; i++ {
		p := string(r.bytes())
		if len(r.b) < 1 {
			r.bad = true
			break
		}
		if len(r.b) < 2 {
			r.bad = true
			break
		}
		f, f2 := r.b[0], r.b[1]
		r.b = r.b[2:]
		if f2&^(flag2DeleteSourceBranch|flag2RequireSandbox) != 0 {
			r.bad = true
			break
		}
		br := trust.Branch{RequireSandbox: f2&flag2RequireSandbox != 0, RequirePullRequest: f&flagRequirePR != 0, RequireResolvedThreads: f&flagResolvedThreads != 0,
			RequireProvenance: f&flagProvenance != 0, QueueCandidates: f&flagQueueCandidates != 0,
			BlockOnChangesRequested: f&flagBlockOnChanges != 0, ForbidBypass: f&flagForbidBypass != 0}
		br.Landing = landingOf(f, f2)
		br.RequiredApprovals, br.QueueDepth = r.int(), r.int()
		br.CheckTimeout = time.Duration(r.varint())
		br.CheckEvery = r.int()
		if k := r.uvarint(); k > 0 && !r.bad {
			if k-1 > uint64(len(r.b)) {
				r.bad = true
				break
			}
			br.RequiredChecks = make([]string, k-1)
			for j := range br.RequiredChecks {
				br.RequiredChecks[j] = string(r.bytes())
			}
		}
		if k := r.uvarint(); k > 0 && !r.bad {
			if k-1 > uint64(len(r.b)) {
				r.bad = true
				break
			}
			br.Approvers = make([]string, k-1)
			for j := range br.Approvers {
				br.Approvers[j] = string(r.bytes())
			}
		}
		if br.Owners, ok = r.owners(); !ok {
			return nil, false
		}
		if br.Partitions, ok = r.partitions(); !ok {
			return nil, false
		}
		if _, dup := st.Rules.Protected[p]; dup {
			return nil, false
		}
		st.Rules.Protected[p] = br
	}
	st.Rules.Ceilings = trust.Ceilings{EventsPerRef: r.int(), EventBytes: r.int(), ParentsPerEvent: r.int()}
	if n = r.count(20 + 2); n > 0 {
		st.Skipped = make([]trust.Skip, n)
		for i := range st.Skipped {
			st.Skipped[i] = trust.Skip{ID: r.hash(), Type: string(r.bytes()), Reason: string(r.bytes())}
		}
	}
	if len(r.b) < 1 || r.b[0] > 2 {
		return nil, false
	}
	if r.b[0] > 0 {
		v := r.b[0] == 2
		st.Rules.RequireKnownPusher = &v
	}
	r.b = r.b[1:]
	if r.bad || len(r.b) != 0 {
		return nil, false
	}
	return st, true
}

// foldTrust returns the trust state at tip: from the fold cache, else by
// reading and folding the log (and keeping the result).
func (j *judge) foldTrust(tip plumbing.Hash) (*trust.State, error) {
	if j.in.Cache != nil {
		if b, ok := j.in.Cache.Get(trustStateKey(tip)); ok {
			if st, ok := decodeTrustState(tip, b); ok {
				return st, nil
			}
		}
	}
	evs, err := j.readLog(tip)
	if err != nil {
		return nil, j.storedErr(CodeTrustInvalid, hubrefs.TrustRef, err)
	}
	st, err := trust.Fold(evs)
	if err != nil {
		return nil, refuse(CodeTrustInvalid, "%s cannot be folded (%v); repair it from a good replica", hubrefs.TrustRef, err)
	}
	if j.in.Cache != nil {
		j.in.Cache.Put(trustStateKey(tip), encodeTrustState(st))
	}
	return st, nil
}

// appendLists encodes two lists of strings (an owner's paths and
// approvers, a partition's paths and reads), each its count and its items.
func appendLists(b []byte, first, second []string) []byte {
	for _, list := range [][]string{first, second} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, s := range list {
			b = appendBytes(b, []byte(s))
		}
	}
	return b
}

// lists decodes appendLists.
func (r *entryReader) lists() [2][]string {
	var lists [2][]string
	for l := range lists {
		k := r.count(1)
		for j := 0; j < k && !r.bad; j++ {
			lists[l] = append(lists[l], string(r.bytes()))
		}
	}
	return lists
}

// appendOwners encodes a branch's owners (see the entry layout above).
func appendOwners(b []byte, owners []trust.Owner) []byte {
	b = binary.AppendUvarint(b, uint64(len(owners)))
	for _, o := range owners {
		b = binary.AppendVarint(b, int64(o.Approvals))
		b = appendLists(b, o.Paths, o.Approvers)
	}
	return b
}

// owners decodes appendOwners; ok is false when the entry is damaged.
func (r *entryReader) owners() ([]trust.Owner, bool) {
	n := r.count(3)
	if r.bad || n == 0 {
		return nil, !r.bad
	}
	out := make([]trust.Owner, n)
	for i := range out {
		approvals := r.int()
		lists := r.lists()
		if r.bad {
			return nil, false
		}
		o, err := trust.NewOwner(lists[0], lists[1], approvals)
		if err != nil {
			return nil, false
		}
		out[i] = o
	}
	return out, true
}

// appendPartitions encodes a branch's partitions (see the entry layout
// above).
func appendPartitions(b []byte, parts []trust.Partition) []byte {
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		b = appendBytes(b, []byte(p.Name))
		b = appendLists(b, p.Paths, p.Reads)
	}
	return b
}

// partitions decodes appendPartitions; ok is false when the entry is
// damaged.
func (r *entryReader) partitions() ([]trust.Partition, bool) {
	n := r.count(3)
	if r.bad || n == 0 {
		return nil, !r.bad
	}
	out := make([]trust.Partition, n)
	for i := range out {
		name := string(r.bytes())
		lists := r.lists()
		if r.bad {
			return nil, false
		}
		p, err := trust.NewPartition(name, lists[0], lists[1])
		if err != nil {
			return nil, false
		}
		out[i] = p
	}
	return out, true
}
