package trust

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Partitions (docs/trust.md, "Partitions"): rules "partitions" per
// protected branch, a list of entries {"name", "paths", "reads"}. A pull
// request belongs to partition X when every file it changes lies in X's
// paths and none lies in another partition's reads; otherwise it is global.
// Each partition is a lane of the queue (docs/queue.md, "Partitions and
// lanes"); its checks are declared to read X's paths and reads only (X's
// inputs), and a lane's tested candidate lands on a moved tip only when
// the landed tree equals the tested one on every input (docs/boundary.md,
// "Partition steps").

// Partition is one entry of a branch's "partitions".
type Partition struct {
	Name  string
	Paths []string // gitignore-style globs (CompilePathGlob): what the partition owns
	Reads []string // globs: what else its checks read
	paths []PathGlob
	reads []PathGlob
}

// MaxPartitions bounds a branch's partitions.
const MaxPartitions = 32

// GlobalPartition is the name under which global pull requests (in no
// partition) are counted and shown; no partition may take it.
const GlobalPartition = "global"

// NewPartition builds a partition, compiling its globs.
func NewPartition(name string, paths, reads []string) (Partition, error) {
	p := Partition{Name: name, Paths: paths, Reads: reads}
	for _, s := range paths {
		g, err := CompilePathGlob(s)
		if err != nil {
			return Partition{}, err
		}
		p.paths = append(p.paths, g)
	}
	for _, s := range reads {
		g, err := CompilePathGlob(s)
		if err != nil {
			return Partition{}, err
		}
		p.reads = append(p.reads, g)
	}
	return p, nil
}

// compiled returns p with its globs compiled (p built without
// NewPartition: a test's literal).
func (p Partition) compiled() Partition {
	if len(p.paths) == len(p.Paths) && len(p.reads) == len(p.Reads) {
		return p
	}
	c, err := NewPartition(p.Name, p.Paths, p.Reads)
	if err != nil {
		return Partition{Name: p.Name, Paths: p.Paths, Reads: p.Reads} // matches nothing
	}
	return c
}

// Owns reports whether the file at path lies in the partition's paths.
func (p Partition) Owns(path string) bool {
	p = p.compiled()
	return MatchAny(p.paths, path)
}

// ReadsPath reports whether the file at path lies in the partition's
// reads (its paths aside).
func (p Partition) ReadsPath(path string) bool {
	p = p.compiled()
	return MatchAny(p.reads, path)
}

// Input reports whether the file at path is one of the partition's
// inputs: its paths or its reads. A partition step's tree must equal its
// tested candidate's on every input.
func (p Partition) Input(path string) bool {
	p = p.compiled()
	return MatchAny(p.paths, path) || MatchAny(p.reads, path)
}

// Inputs lists the globs of the partition's inputs: its paths, then its
// reads (what a check confined to the partition may read).
func (p Partition) Inputs() []string {
	return append(append([]string{}, p.Paths...), p.Reads...)
}

// Partition returns the branch's partition named name.
func (b Branch) Partition(name string) (Partition, bool) {
	for _, p := range b.Partitions {
		if p.Name == name {
			return p.compiled(), true
		}
	}
	return Partition{}, false
}

// Membership is which partition a set of changed files belongs to.
type Membership struct {
	// Partition is the partition's name; "" means global.
	Partition string
	// Why says why the files are global (empty when in a partition).
	Why string
	// File is the file that makes them global ("" when none does: no
	// file changed, or no partitions).
	File string
}

// Global reports whether the files are in no partition.
func (m Membership) Global() bool { return m.Partition == "" }

// PartitionOf is the one membership rule (docs/trust.md, "Partitions"):
// the files changed (slash-separated paths from the root of the tree)
// belong to partition X when every one lies in X's paths and none lies in
// another partition's reads. No files, or a branch without partitions,
// are global.
func (b Branch) PartitionOf(changed []string) Membership {
	if len(b.Partitions) == 0 {
		return Membership{Why: "the branch has no partitions"}
	}
	if len(changed) == 0 {
		return Membership{Why: "it changes no file"}
	}
	parts := make([]Partition, len(b.Partitions))
	for i, p := range b.Partitions {
		parts[i] = p.compiled()
	}
	owner, first := -1, ""
	for _, f := range changed {
		comps := strings.Split(f, "/")
		k := -1
		for i := range parts {
			if matchAnySplit(parts[i].paths, comps) {
				k = i
				break
			}
		}
		switch {
		case k < 0:
			return Membership{File: f, Why: fmt.Sprintf("%s lies in no partition's paths", f)}
		case owner >= 0 && k != owner:
			return Membership{File: f, Why: fmt.Sprintf("%s lies in partition %s and %s in partition %s", first, parts[owner].Name, f, parts[k].Name)}
		case owner < 0:
			first = f
		}
		owner = k
	}
	for _, f := range changed {
		comps := strings.Split(f, "/")
		for i := range parts {
			if i != owner && matchAnySplit(parts[i].reads, comps) {
				return Membership{File: f, Why: fmt.Sprintf("%s lies in partition %s but is read by partition %s", f, parts[owner].Name, parts[i].Name)}
			}
		}
	}
	return Membership{Partition: parts[owner].Name}
}

var partitionFields = []string{"name", "paths", "reads"}

// parsePartitions decodes a branch's "partitions" (null or absent: none).
func parsePartitions(m map[string]json.RawMessage, path string, strict bool) ([]Partition, error) {
	raw, ok := m["partitions"]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%w: %s.partitions: want a list of {\"name\", \"paths\", \"reads\"}: %w", ErrInvalidRules, path, err)
	}
	var out []Partition
	for i, e := range list {
		epath := fmt.Sprintf("%s.partitions[%d]", path, i)
		em, ok, err := object(e, epath, partitionFields, strict)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: %s must be an object", ErrInvalidRules, epath)
		}
		var name string
		var paths, reads []string
		for _, f := range []struct {
			name string
			dst  any
		}{{"name", &name}, {"paths", &paths}, {"reads", &reads}} {
			if err := field(em, f.name, epath, f.dst); err != nil {
				return nil, err
			}
		}
		if len(reads) == 0 {
			reads = nil // [] and absent are the same
		}
		out = append(out, Partition{Name: name, Paths: paths, Reads: reads})
	}
	if err := validatePartitions(out, path); err != nil {
		return nil, err
	}
	for i, p := range out {
		out[i], _ = NewPartition(p.Name, p.Paths, p.Reads)
	}
	return out, nil
}

// ValidPartitionName reports whether name may name a partition: as a
// member name (1 to 64 bytes of letters, digits, '.', '_' and '-',
// starting with a letter or digit), and not "global".
func ValidPartitionName(name string) error {
	if name == GlobalPartition {
		return fmt.Errorf("%w: partition name %q is reserved for the pull requests in no partition", ErrMalformed, name)
	}
	if err := ValidName(name); err != nil {
		return fmt.Errorf("partition name: %w", err)
	}
	return nil
}

// validatePartitions checks a branch's partitions (path names the
// branch): names, globs, and that no two partitions' paths overlap.
func validatePartitions(parts []Partition, path string) error {
	if len(parts) > MaxPartitions {
		return fmt.Errorf("%w: %s.partitions has %d entries; at most %d", ErrInvalidRules, path, len(parts), MaxPartitions)
	}
	names := map[string]bool{}
	for i, p := range parts {
		epath := fmt.Sprintf("%s.partitions[%d]", path, i)
		if err := ValidPartitionName(p.Name); err != nil {
			return fmt.Errorf("%w: %s.name: %w", ErrInvalidRules, epath, err)
		}
		if names[p.Name] {
			return fmt.Errorf("%w: %s.name %q names a partition twice", ErrInvalidRules, epath, p.Name)
		}
		names[p.Name] = true
		if len(p.Paths) == 0 {
			return fmt.Errorf("%w: %s.paths is empty; name the files the partition owns, such as [\"web/**\"]", ErrInvalidRules, epath)
		}
		for _, f := range []struct {
			name  string
			globs []string
		}{{"paths", p.Paths}, {"reads", p.Reads}} {
			seen := map[string]bool{}
			for _, s := range f.globs {
				if _, err := CompilePathGlob(s); err != nil {
					return fmt.Errorf("%w: %s.%s: %w", ErrInvalidRules, epath, f.name, err)
				}
				if seen[s] {
					return fmt.Errorf("%w: %s.%s names %q twice", ErrInvalidRules, epath, f.name, s)
				}
				seen[s] = true
			}
		}
	}
	// No file may lie in two partitions' paths (globoverlap.go decides,
	// never calling overlapping globs disjoint).
	for i := range parts {
		for j := i + 1; j < len(parts); j++ {
			for _, a := range parts[i].Paths {
				ga, _ := CompilePathGlob(a)
				for _, b := range parts[j].Paths {
					gb, _ := CompilePathGlob(b)
					if w, ok := GlobsOverlap(ga, gb); ok {
						return fmt.Errorf("%w: %s.partitions: the paths of %q and %q overlap: %q (partitions[%d]) and %q (partitions[%d]) both match %q; a file belongs to one partition at most, so narrow one of them (a file both need to read goes in reads)",
							ErrInvalidRules, path, parts[i].Name, parts[j].Name, a, i, b, j, w)
					}
				}
			}
		}
	}
	return nil
}

// partitionJSON is how MarshalJSON writes an entry.
type partitionJSON struct {
	Name  string   `json:"name"`
	Paths []string `json:"paths"`
	Reads []string `json:"reads"`
}

func partitionsJSON(parts []Partition) []partitionJSON {
	if parts == nil {
		return nil
	}
	out := make([]partitionJSON, len(parts))
	for i, p := range parts {
		reads := p.Reads
		if reads == nil {
			reads = []string{}
		}
		out[i] = partitionJSON{p.Name, p.Paths, reads}
	}
	return out
}
