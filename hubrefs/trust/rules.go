package trust

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Rules is the rules object of the latest rules.set (docs/trust.md), with
// every default filled in.
type Rules struct {
	Protected map[string]Branch // by full ref name or glob
	Ceilings  Ceilings
	// RequireKnownPusher is the top-level "requireKnownPusher": nil when
	// the rules do not say, and the hook decides by how the push arrived
	// (docs/serving.md).
	RequireKnownPusher *bool
}

// Branch is the protection of one ref (or glob of refs). Values are resolved:
// a field absent from the JSON holds its default here. RequiredChecks nil (or
// empty) means no checks are required.
type Branch struct {
	RequirePullRequest     bool
	RequiredApprovals      int
	RequiredChecks         []string
	RequireResolvedThreads bool
	RequireProvenance      bool
	QueueCandidates        bool
	QueueDepth             int
	// CheckTimeout (rules "checkTimeout", a duration string such as "30m";
	// zero = wait forever): how long after its queue.candidate a candidate
	// may go without a required check concluding before the queue evicts
	// its pull request (docs/queue.md, "Silence").
	CheckTimeout time.Duration
	// CheckEvery (rules "checkEvery", default 1): batch checks
	// (docs/queue.md, "Batch checks"). 1 is the strict chain rule, every
	// candidate step carries its own green required checks; K > 1 lets a
	// green step the queue marked as a group's last vouch for the steps
	// before it in its group, groups of at most K steps. Held normalized:
	// zero means 1 (the default; see Every), so rules without the field
	// compare equal to rules that spell out 1.
	CheckEvery int
	// Approvers (rules "approvers"): the principals — member names and
	// "team:NAME" — whose approvals count toward RequiredApprovals
	// (docs/trust.md, "Who counts"). Nil: every holder of hub.review, as
	// without the field. Teams are judged as they stand in the trust
	// state the landing is judged against.
	Approvers []string
	// BlockOnChangesRequested (rules "blockOnChangesRequested"): a
	// reviewer whose latest verdict is changes blocks landing, whatever
	// the head, until they review again or the review is dismissed
	// (docs/trust.md, "Vetoes").
	BlockOnChangesRequested bool
	// ForbidBypass is rules "allowBypass": false (the default, true, lets
	// a holder of hub.bypass bypass the review and check rules for the
	// direct landing of a pull request's head named by pr.bypassed;
	// docs/trust.md, "An audited bypass"). Held inverted so that the zero
	// Branch allows it, as the rules do by default.
	ForbidBypass bool

	// Landing: mergeMethod and requireLinearHistory (rules_landing.go).
	Landing
	// Owners (rules "owners"): path owners, each entry's paths needing
	// its own approvals (docs/trust.md, "Path owners"; owners.go).
	Owners []Owner
	// RequireSandbox (rules "requireSandbox"): a required check counts
	// only from completions whose worker says the command ran confined by
	// Landlock ("sandbox": "landlock-<N>", or "landlock-<N>+reads";
	// docs/ci.md). The worker's
	// attestation: it keeps honest but misconfigured workers out, not a
	// stolen key.
	RequireSandbox bool
	// Partitions (rules "partitions"): the queue's lanes, each with the
	// paths it owns and what else its checks read (docs/trust.md,
	// "Partitions"; partitions.go).
	Partitions []Partition
}

// Every is the group size bound of batch checks: CheckEvery, or 1 when it
// is unset.
func (b Branch) Every() int {
	return max(b.CheckEvery, 1)
}

// Ceilings bound every hub ref (docs/events.md).
type Ceilings struct {
	EventsPerRef    int // events in one hub ref
	EventBytes      int // bytes of one payload
	ParentsPerEvent int // parents of one event (JSON "parentsPerEvent")
}

// Defaults (docs/events.md, docs/trust.md).
const (
	DefaultRequiredApprovals = 1
	DefaultQueueDepth        = 8
	// MaxCheckEvery caps checkEvery: a group's end vouches for at most this
	// many steps.
	MaxCheckEvery          = 64
	DefaultEventsPerRef    = 10000
	DefaultEventBytes      = 65536
	DefaultParentsPerEvent = 8
)

// DefaultBranch is the protection a key with an empty object gets.
func DefaultBranch() Branch {
	return Branch{
		RequirePullRequest: true,
		RequiredApprovals:  DefaultRequiredApprovals,
		RequiredChecks:     []string{"ci"},
		QueueDepth:         DefaultQueueDepth,
	}
}

// DefaultCeilings are the ceilings when rules name none.
func DefaultCeilings() Ceilings {
	return Ceilings{EventsPerRef: DefaultEventsPerRef, EventBytes: DefaultEventBytes, ParentsPerEvent: DefaultParentsPerEvent}
}

// DefaultRules are the rules of a trust log without rules.set: nothing
// protected, default ceilings.
func DefaultRules() Rules {
	return Rules{Protected: map[string]Branch{}, Ceilings: DefaultCeilings()}
}

// ParseRules decodes a rules object as readers do: unknown fields, at any
// level, are ignored. Field names match exactly (case-sensitive); a null
// field value is the same as an absent one.
func ParseRules(data []byte) (Rules, error) { return parseRules(data, false) }

// ParseRulesStrict decodes a rules object as `git+ rules set` does: an
// unknown field at any level is an error naming it (ErrUnknownField).
func ParseRulesStrict(data []byte) (Rules, error) { return parseRules(data, true) }

var (
	rulesFields    = []string{"protected", "ceilings", "requireKnownPusher"}
	branchFields   = []string{"requirePullRequest", "requiredApprovals", "requiredChecks", "requireResolvedThreads", "requireProvenance", "queueCandidates", "queueDepth", "checkTimeout", "checkEvery", "approvers", "blockOnChangesRequested", "allowBypass", "owners", "requireSandbox", "partitions"}
	ceilingsFields = []string{"eventsPerRef", "eventBytes", "parentsPerEvent"}
)

// object decodes raw as a JSON object. ok is false for null.
func object(raw []byte, path string, known []string, strict bool) (map[string]json.RawMessage, bool, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, false, nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false, fmt.Errorf("%w: %s must be a JSON object", ErrInvalidRules, path)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, false, fmt.Errorf("%w: %s: %w", ErrInvalidRules, path, err)
	}
	if strict {
		var unknown []string
		for k := range m {
			if !contains(known, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return nil, false, fmt.Errorf("%w %s.%s: the fields here are %s", ErrUnknownField, path, unknown[0], strings.Join(known, ", "))
		}
	}
	return m, true, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// field decodes m[name] into dst unless it is absent or null.
func field(m map[string]json.RawMessage, name, path string, dst any) error {
	raw, ok := m[name]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%w: %s.%s: %w", ErrInvalidRules, path, name, err)
	}
	return nil
}

func parseRules(data []byte, strict bool) (Rules, error) {
	r := DefaultRules()
	top, ok, err := object(data, "rules", rulesFields, strict)
	if err != nil {
		return Rules{}, err
	}
	if !ok {
		return Rules{}, fmt.Errorf("%w: rules must be a JSON object, not null", ErrInvalidRules)
	}
	if raw, ok := top["protected"]; ok {
		prot, ok, err := object(raw, "rules.protected", nil, false)
		if err != nil {
			return Rules{}, err
		}
		if ok {
			keys := make([]string, 0, len(prot))
			for k := range prot {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, key := range keys {
				path := fmt.Sprintf("rules.protected[%q]", key)
				b, err := parseBranch(prot[key], path, strict)
				if err != nil {
					return Rules{}, err
				}
				if err := ValidPattern(key); err != nil {
					return Rules{}, fmt.Errorf("%w: %s: %w", ErrInvalidRules, path, err)
				}
				r.Protected[key] = b
			}
		}
	}
	if raw, ok := top["requireKnownPusher"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return Rules{}, fmt.Errorf("%w: rules.requireKnownPusher must be true or false: %w", ErrInvalidRules, err)
		}
		r.RequireKnownPusher = &v
	}
	if raw, ok := top["ceilings"]; ok {
		c, ok, err := object(raw, "rules.ceilings", ceilingsFields, strict)
		if err != nil {
			return Rules{}, err
		}
		if ok {
			for _, f := range []struct {
				name string
				dst  *int
			}{{"eventsPerRef", &r.Ceilings.EventsPerRef}, {"eventBytes", &r.Ceilings.EventBytes}, {"parentsPerEvent", &r.Ceilings.ParentsPerEvent}} {
				if err := field(c, f.name, "rules.ceilings", f.dst); err != nil {
					return Rules{}, err
				}
			}
		}
	}
	if err := r.Validate(); err != nil {
		return Rules{}, err
	}
	return r, nil
}

func parseBranch(raw []byte, path string, strict bool) (Branch, error) {
	m, ok, err := object(raw, path, append(branchFields[:len(branchFields):len(branchFields)], landingFields...), strict)
	if err != nil {
		return Branch{}, err
	}
	if !ok {
		return Branch{}, fmt.Errorf("%w: %s must be an object (use {} for the defaults)", ErrInvalidRules, path)
	}
	b := DefaultBranch()
	for _, f := range []struct {
		name string
		dst  any
	}{
		{"requirePullRequest", &b.RequirePullRequest},
		{"requiredApprovals", &b.RequiredApprovals},
		{"requireResolvedThreads", &b.RequireResolvedThreads},
		{"requireProvenance", &b.RequireProvenance},
		{"queueCandidates", &b.QueueCandidates},
		{"queueDepth", &b.QueueDepth},
		{"checkEvery", &b.CheckEvery},
		{"blockOnChangesRequested", &b.BlockOnChangesRequested},
		{"requireSandbox", &b.RequireSandbox},
	} {
		if err := field(m, f.name, path, f.dst); err != nil {
			return Branch{}, err
		}
	}
	if _, ok := m["checkEvery"]; ok && b.CheckEvery < 1 {
		return Branch{}, fmt.Errorf("%w: %s.checkEvery is %d; use 1 (every candidate checked, the default) or more", ErrInvalidRules, path, b.CheckEvery)
	}
	if b.CheckEvery == 1 {
		b.CheckEvery = 0 // the default, held as zero
	}
	if err := parseLanding(m, path, &b.Landing); err != nil {
		return Branch{}, err
	}
	var timeout string
	if err := field(m, "checkTimeout", path, &timeout); err != nil {
		return Branch{}, err
	}
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d <= 0 {
			return Branch{}, fmt.Errorf("%w: %s.checkTimeout %q: want a positive duration such as \"30m\" or \"2h\"", ErrInvalidRules, path, timeout)
		}
		b.CheckTimeout = d
	}
	allow := true
	if err := field(m, "allowBypass", path, &allow); err != nil {
		return Branch{}, err
	}
	b.ForbidBypass = !allow
	if raw, ok := m["approvers"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		var approvers []string
		if err := json.Unmarshal(raw, &approvers); err != nil {
			return Branch{}, fmt.Errorf("%w: %s.approvers: %w", ErrInvalidRules, path, err)
		}
		if len(approvers) == 0 {
			return Branch{}, fmt.Errorf("%w: %s.approvers is empty, which lets nobody approve; leave it out for any hub.review holder", ErrInvalidRules, path)
		}
		b.Approvers = approvers
	}
	if b.Owners, err = parseOwners(m, path, strict); err != nil {
		return Branch{}, err
	}
	if b.Partitions, err = parsePartitions(m, path, strict); err != nil {
		return Branch{}, err
	}
	if raw, ok := m["requiredChecks"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		var checks []string
		if err := json.Unmarshal(raw, &checks); err != nil {
			return Branch{}, fmt.Errorf("%w: %s.requiredChecks: %w", ErrInvalidRules, path, err)
		}
		if len(checks) == 0 {
			checks = nil // explicit []: no checks
		}
		b.RequiredChecks = checks
	}
	return b, nil
}

// Validate checks rules built in Go the way the decoders check JSON.
func (r Rules) Validate() error {
	keys := make([]string, 0, len(r.Protected))
	for k := range r.Protected {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := fmt.Sprintf("rules.protected[%q]", k)
		if err := ValidPattern(k); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalidRules, path, err)
		}
		if strings.HasPrefix(k, "refs/hub/") {
			return fmt.Errorf("%w: %s: refs/hub/* are governed by the event rules, not by branch protection; protect branches (refs/heads/...)", ErrInvalidRules, path)
		}
		b := r.Protected[k]
		if b.RequiredApprovals < 0 {
			return fmt.Errorf("%w: %s.requiredApprovals is %d; use 0 or more", ErrInvalidRules, path, b.RequiredApprovals)
		}
		if b.CheckTimeout < 0 {
			return fmt.Errorf("%w: %s.checkTimeout is %s; use a positive duration, or leave it out to wait forever", ErrInvalidRules, path, b.CheckTimeout)
		}
		if b.QueueDepth < 1 {
			return fmt.Errorf("%w: %s.queueDepth is %d; use 1 or more (turn candidates off with queueCandidates: false)", ErrInvalidRules, path, b.QueueDepth)
		}
		if b.CheckEvery < 0 || b.CheckEvery > MaxCheckEvery {
			return fmt.Errorf("%w: %s.checkEvery is %d; use 1 (every candidate checked) up to %d", ErrInvalidRules, path, b.CheckEvery, MaxCheckEvery)
		}
		if b.CheckEvery > b.QueueDepth {
			return fmt.Errorf("%w: %s.checkEvery is %d, more than queueDepth %d; a group cannot be longer than the chain, lower checkEvery or raise queueDepth", ErrInvalidRules, path, b.CheckEvery, b.QueueDepth)
		}
		if err := b.validLanding(path); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, c := range b.RequiredChecks {
			if err := ValidCheckName(c); err != nil {
				return fmt.Errorf("%w: %s.requiredChecks: %w", ErrInvalidRules, path, err)
			}
			if seen[c] {
				return fmt.Errorf("%w: %s.requiredChecks names %q twice", ErrInvalidRules, path, c)
			}
			seen[c] = true
		}
		if b.Approvers != nil && len(b.Approvers) == 0 {
			return fmt.Errorf("%w: %s.approvers is empty, which lets nobody approve; leave it out for any hub.review holder", ErrInvalidRules, path)
		}
		seen = map[string]bool{}
		for _, p := range b.Approvers {
			if err := ValidPrincipal(p); err != nil {
				return fmt.Errorf("%w: %s.approvers: %w (write a member name or team:NAME)", ErrInvalidRules, path, err)
			}
			if seen[p] {
				return fmt.Errorf("%w: %s.approvers names %q twice", ErrInvalidRules, path, p)
			}
			seen[p] = true
		}
		if err := validateOwners(b.Owners, path); err != nil {
			return err
		}
		if err := validatePartitions(b.Partitions, path); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"eventsPerRef", r.Ceilings.EventsPerRef}, {"eventBytes", r.Ceilings.EventBytes}, {"parentsPerEvent", r.Ceilings.ParentsPerEvent}} {
		if c.v < 1 {
			return fmt.Errorf("%w: rules.ceilings.%s is %d; use 1 or more", ErrInvalidRules, c.name, c.v)
		}
	}
	return nil
}

// MarshalJSON writes every field explicitly, so ParseRules of the result
// gives r back.
func (r Rules) MarshalJSON() ([]byte, error) {
	type branch struct {
		RequirePullRequest     bool     `json:"requirePullRequest"`
		RequiredApprovals      int      `json:"requiredApprovals"`
		RequiredChecks         []string `json:"requiredChecks"`
		RequireResolvedThreads bool     `json:"requireResolvedThreads"`
		RequireProvenance      bool     `json:"requireProvenance"`
		QueueCandidates        bool     `json:"queueCandidates"`
		QueueDepth             int      `json:"queueDepth"`
		CheckTimeout           string   `json:"checkTimeout"` // "" waits forever (the default)
		CheckEvery             int      `json:"checkEvery"`
		Approvers              []string `json:"approvers,omitempty"` // absent: any hub.review holder
		BlockOnChanges         bool     `json:"blockOnChangesRequested"`
		AllowBypass            bool     `json:"allowBypass"`
		landingJSON
		Owners         ownerSet        `json:"owners,omitempty"`
		RequireSandbox bool            `json:"requireSandbox"`
		Partitions     []partitionJSON `json:"partitions,omitempty"`
	}
	type ceilings struct {
		EventsPerRef    int `json:"eventsPerRef"`
		EventBytes      int `json:"eventBytes"`
		ParentsPerEvent int `json:"parentsPerEvent"`
	}
	out := struct {
		Protected          map[string]branch `json:"protected"`
		Ceilings           ceilings          `json:"ceilings"`
		RequireKnownPusher *bool             `json:"requireKnownPusher,omitempty"`
	}{Protected: map[string]branch{}, Ceilings: ceilings(r.Ceilings), RequireKnownPusher: r.RequireKnownPusher}
	for k, b := range r.Protected {
		checks := b.RequiredChecks
		if checks == nil {
			checks = []string{}
		}
		timeout := ""
		if b.CheckTimeout > 0 {
			timeout = b.CheckTimeout.String()
		}
		out.Protected[k] = branch{b.RequirePullRequest, b.RequiredApprovals, checks, b.RequireResolvedThreads, b.RequireProvenance, b.QueueCandidates, b.QueueDepth, timeout, b.Every(), b.Approvers, b.BlockOnChangesRequested, !b.ForbidBypass, b.Landing.json(), ownersJSON(b.Owners), b.RequireSandbox, partitionsJSON(b.Partitions)}
	}
	return json.Marshal(out)
}

// For returns the protection of ref and whether it is protected. An exact
// key beats any glob; among matching globs the longest key wins, then the
// one with fewer '*', then the lexically smallest (so the choice never
// depends on map order).
func (r Rules) For(ref string) (Branch, bool) {
	if b, ok := r.Protected[ref]; ok && !strings.Contains(ref, "*") {
		return b, true
	}
	best, found := "", false
	for k := range r.Protected {
		if !strings.Contains(k, "*") || !matchRef(k, ref) {
			continue
		}
		if !found || better(k, best) {
			best, found = k, true
		}
	}
	if !found {
		return Branch{}, false
	}
	return r.Protected[best], true
}

func better(a, b string) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	sa, sb := strings.Count(a, "*"), strings.Count(b, "*")
	if sa != sb {
		return sa < sb
	}
	return a < b
}
