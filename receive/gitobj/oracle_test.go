package gitobj

// The git binary as the oracle: objects are written loose into a scratch
// bare repository, `git fsck --strict` judges them, and `git log` /
// `git ls-tree` say how git reads the valid ones.

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type oracle struct {
	t   testing.TB
	dir string
}

func newOracle(t testing.TB) *oracle {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary")
	}
	dir := t.TempDir()
	o := &oracle{t: t, dir: dir}
	o.git(nil, "init", "-q", "--bare", dir)
	return o
}

func (o *oracle) git(stdin []byte, args ...string) (string, string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", o.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// write stores raw as a loose object of type typ and returns its id and
// path (as `git hash-object --literally -w` would).
func (o *oracle) write(typ string, raw []byte) (string, string) {
	o.t.Helper()
	hdr := fmt.Sprintf("%s %d\x00", typ, len(raw))
	sum := sha1.New()
	sum.Write([]byte(hdr))
	sum.Write(raw)
	id := hex.EncodeToString(sum.Sum(nil))
	p := filepath.Join(o.dir, "objects", id[:2], id[2:])
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		o.t.Fatal(err)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte(hdr))
	zw.Write(raw)
	zw.Close()
	if err := os.WriteFile(p, z.Bytes(), 0o444); err != nil && !os.IsExist(err) {
		o.t.Fatal(err)
	}
	return id, p
}

// fsck returns the ids among ids that `git fsck --strict` refuses, with
// its words. A badFilemode note (a message git only prints) counts as a
// refusal: git+ refuses every mode git does not write (docs/objects.md).
func (o *oracle) fsck(ids []string) map[string]string {
	_, stderr, _ := o.git(nil, "-c", "core.commitGraph=false", "-c", "core.multiPackIndex=false", "fsck", "--strict", "--no-dangling", "--no-reflogs", "--no-progress")
	bad := map[string]string{}
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "error") && !strings.Contains(line, "badFilemode") {
			continue
		}
		if strings.HasSuffix(line, ": broken links") {
			continue // an entry names an object not here: not the object's own fault
		}
		for _, id := range ids {
			if strings.Contains(line, id) {
				bad[id] += line + "\n"
			}
		}
	}
	return bad
}

// commitsRead returns tree and parents of each (valid) commit as git reads them.
func (o *oracle) commitsRead(ids []string) map[string]string {
	o.t.Helper()
	if len(ids) == 0 {
		return nil
	}
	out, stderr, err := o.git([]byte(strings.Join(ids, "\n")+"\n"), "log", "--no-walk=unsorted", "--stdin", "--format=%H %T %P")
	if err != nil {
		o.t.Fatalf("git log: %v\n%s", err, stderr)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		id, rest, _ := strings.Cut(sc.Text(), " ")
		m[id] = strings.TrimSpace(rest)
	}
	return m
}

// treeRead returns `git ls-tree` of a (valid) tree as "mode id name" lines,
// and the tree as git would write it from that listing.
func (o *oracle) treeRead(id string) (string, []byte) {
	o.t.Helper()
	out, stderr, err := o.git(nil, "ls-tree", "-z", id)
	if err != nil {
		o.t.Fatalf("git ls-tree %s: %v\n%s", id, err, stderr)
	}
	var list strings.Builder
	var canon []byte
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, name, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta) // mode type id
		mode := strings.TrimPrefix(f[0], "0")
		fmt.Fprintf(&list, "%s %s %q\n", mode, f[2], name)
		raw, _ := hex.DecodeString(f[2])
		canon = append(append(append(append(canon, mode...), ' '), name...), 0)
		canon = append(canon, raw...)
	}
	return list.String(), canon
}

func ourCommit(raw []byte) (string, error) {
	c, err := ParseCommit(raw)
	if err != nil {
		return "", err
	}
	s := c.Tree.String()
	for _, p := range c.Parents {
		s += " " + p.String()
	}
	return s, nil
}

func ourTree(raw []byte) (string, error) {
	es, err := ParseTree(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s %s %q\n", strconv.FormatUint(uint64(e.Mode), 8), e.ID, e.Name)
	}
	return b.String(), nil
}

// repeatsCoreHeader reports whether a header after the commit's committer
// line is named tree, parent, author or committer: the one commit rule
// where git+ is stricter than git (docs/objects.md).
func repeatsCoreHeader(raw []byte) bool {
	hdr, _, _ := bytes.Cut(raw, []byte("\n\n"))
	lines := strings.Split(string(hdr), "\n")
	seen := false
	for _, l := range lines {
		name, _, _ := strings.Cut(l, " ")
		if seen {
			switch name {
			case "tree", "parent", "author", "committer":
				return true
			}
		}
		if name == "committer" {
			seen = true
		}
	}
	return false
}

// judgeCommit compares our reading of one commit with git's.
func judgeCommit(t testing.TB, raw []byte, gitBad string, gitRead string) {
	t.Helper()
	ours, err := ourCommit(raw)
	switch {
	case err == nil && gitBad != "":
		t.Errorf("we accept a commit git refuses:\n%q\ngit: %s", raw, gitBad)
	case err != nil && gitBad == "":
		if !(strings.Contains(err.Error(), "repeatedHeader") && repeatsCoreHeader(raw)) {
			t.Errorf("we refuse a commit git accepts: %v\n%q", err, raw)
		}
	case err == nil && ours != gitRead:
		t.Errorf("tree/parents differ:\nours %s\ngit  %s\n%q", ours, gitRead, raw)
	}
}

// judgeTree compares our reading of one tree with git's.
func judgeTree(t testing.TB, o *oracle, id string, raw []byte, gitBad string) {
	t.Helper()
	ours, err := ourTree(raw)
	switch {
	case err == nil && gitBad != "":
		t.Errorf("we accept a tree git refuses:\n%q\ngit: %s", raw, gitBad)
	case err != nil && gitBad == "":
		// Stricter than git only about how a tree is written: then git's
		// own listing, written back, differs from the object.
		_, canon := o.treeRead(id)
		if !strings.Contains(err.Error(), "badFilemode") || bytes.Equal(canon, raw) {
			t.Errorf("we refuse a tree git accepts: %v\n%q", err, raw)
		}
	case err == nil:
		if list, _ := o.treeRead(id); list != ours {
			t.Errorf("entries differ:\nours\n%sgit\n%s%q", ours, list, raw)
		}
	}
}
