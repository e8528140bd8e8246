// Package judgedrec is the record by which post-receive knows that git+'s
// pre-receive judged the push it runs for (docs/operating.md "When a
// protected branch moves unjudged"). A gitolite admin (or an operator)
// can drop git+ from pre-receive while its post-receive still runs; then a
// push moves protected branches with no judgement, and the post-receive
// raises the alarm when it finds no record of the updates it is told of.
//
// Decisions:
//   - What both hooks of one push see is the same command list: git feeds
//     pre-receive every "<old> <new> <ref>" line and post-receive the lines
//     of the refs it updated, a subset. (The quarantine path is gone by
//     post-receive, and receive-pack passes no push id.) So the record is
//     keyed by the (ref, old, new) triple itself: pre-receive, when it
//     accepts a push, appends one "J" line per update; post-receive finds
//     a "J" line for each of its updates and appends a "U" line consuming
//     it. A triple is judged while its J lines outnumber its U lines.
//   - Concurrent pushes: each hook appends with one write(2) on a file
//     opened O_APPEND, so lines never interleave; two pushes of different
//     triples find their own lines, and two pushes of the same triple
//     (only one of which can apply: git moves a ref only from its old
//     value) find two.
//   - A record is trusted for Window after it was written: a push whose
//     judgement was accepted but that did not apply (a later hook or a
//     lost race refused it) leaves a J line nobody consumes, which must
//     not vouch for an unjudged push of the same triple much later.
//   - Bounded like receive/hookrec: the file rotates to File.1 at
//     MaxBytes; readers read from the end back to Window, both files.
//   - Failures to write are ignored (a push is never refused for its
//     record); the post-receive then reports the update as unjudged, which
//     says why it could not tell.
//   - Standard library only: the lean hook links it.
package judgedrec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// File is the record file, relative to the git directory.
const File = "gitplus/judged/pushes.log"

// MaxBytes is the size past which the file rotates.
const MaxBytes = 1 << 20

// Window is how long a pre-receive's record vouches for its push.
const Window = 15 * time.Minute

// Update is one ref update: full ref name, old and new ids in hex.
type Update struct {
	Ref, Old, New string
}

func (u Update) key() string { return u.Old + " " + u.New + " " + u.Ref }

func path(gitDir string) string { return filepath.Join(gitDir, filepath.FromSlash(File)) }

// Judged records that pre-receive accepted updates (one push), at now.
func Judged(gitDir string, updates []Update, now time.Time) error {
	return appendLines(gitDir, "J", updates, now)
}

func appendLines(gitDir, kind string, updates []Update, now time.Time) error {
	if len(updates) == 0 {
		return nil
	}
	var b bytes.Buffer
	ts := strconv.FormatInt(now.UnixNano(), 10)
	for _, u := range updates {
		if strings.ContainsAny(u.Ref, " \n") {
			continue
		}
		b.WriteString(kind + " " + ts + " " + u.key() + "\n")
	}
	p := path(gitDir)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		}
	}
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if fi, serr := f.Stat(); serr == nil && fi.Size() >= MaxBytes {
		_ = os.Rename(p, p+".1")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Consume returns, for each of updates (the post-receive's), whether a
// pre-receive record of the last Window before now vouches for it, and
// records the ones it vouched for as used.
func Consume(gitDir string, updates []Update, now time.Time) ([]bool, error) {
	out := make([]bool, len(updates))
	if len(updates) == 0 {
		return out, nil
	}
	want := map[string]int{} // key → J lines minus U lines seen
	for _, u := range updates {
		want[u.key()] = 0
	}
	since := now.Add(-Window).UnixNano()
	var rerr error
	for _, f := range []string{path(gitDir), path(gitDir) + ".1"} {
		done, err := scanBack(f, since, func(kind string, key string) {
			if n, ok := want[key]; ok {
				if kind == "J" {
					want[key] = n + 1
				} else {
					want[key] = n - 1
				}
			}
		})
		if err != nil && rerr == nil {
			rerr = err
		}
		if done {
			break
		}
	}
	var used []Update
	for i, u := range updates {
		if want[u.key()] > 0 {
			out[i] = true
			want[u.key()]--
			used = append(used, u)
		}
	}
	if err := appendLines(gitDir, "U", used, now); err != nil && rerr == nil {
		rerr = err
	}
	return out, rerr
}

// scanBack calls f for every line of the file at p written at or after
// since, newest first, reading from the end in chunks. done reports that a
// line older than since was met (older files need not be read).
func scanBack(p string, since int64, f func(kind, key string)) (done bool, err error) {
	fh, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", p, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return false, err
	}
	const chunk = 64 << 10
	end := fi.Size()
	var rest []byte // the start of a line cut by the previous chunk
	for end > 0 {
		start := end - chunk
		if start < 0 {
			start = 0
		}
		buf := make([]byte, end-start, end-start+int64(len(rest)))
		if _, err := fh.ReadAt(buf, start); err != nil && err != io.EOF {
			return false, fmt.Errorf("reading %s: %w", p, err)
		}
		buf = append(buf, rest...)
		lines := bytes.Split(buf, []byte("\n"))
		first := 0
		if start > 0 {
			rest = lines[0] // may be cut: completed by the next chunk
			first = 1
		}
		for i := len(lines) - 1; i >= first; i-- {
			kind, ts, key, ok := parseLine(string(lines[i]))
			if !ok {
				continue
			}
			if ts < since {
				return true, nil
			}
			f(kind, key)
		}
		end = start
	}
	return false, nil
}

func parseLine(s string) (kind string, ts int64, key string, ok bool) {
	k, s, ok1 := strings.Cut(s, " ")
	t, key, ok2 := strings.Cut(s, " ")
	if !ok1 || !ok2 || (k != "J" && k != "U") {
		return "", 0, "", false
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return "", 0, "", false
	}
	return k, n, key, true
}
