package opstatus

// The unjudged-update alarm (docs/operating.md "When a protected branch
// moves unjudged"): post-receive notices a protected ref that moved
// without git+'s pre-receive having judged the push (git+ dropped from
// pre-receive while its post-receive still runs) and raises it where
// people look.
//
// Decisions:
//   - Every update post-receive is told of is looked up in the
//     pre-receive's records (receive/judgedrec: keyed by the update's
//     (ref, old, new), robust under concurrent pushes). Only updates
//     without a record cost more: the trust state is read then, and an
//     update is unjudged when it moved a hub ref (refs/hub/*) or a branch
//     the rules protect (a symbolic ref judged as its target, as the hook
//     judges it). A repository without a trust log has nothing protected.
//   - Raised in five places: a "git+: ALARM: ..." line to the pusher
//     (remote pushers too: they moved the branch), a line in the
//     post-receive log, a record in <gitdir>/gitplus/alarms/unjudged.log
//     (JSON lines, one write(2) each; what /metrics'
//     gitplus_unjudged_updates_total and the page's banner read), an
//     event of type UnjudgedEvent in the push's webhook delivery (and to
//     wake rules "on" it), and the server's published status ref
//     (opstatus.go), which `git+ queue show` reads in a clone.
//   - The page shows the alarms of the last AlarmBannerAge; the records
//     are kept until the file passes 256 KiB (then rotated to .1) or the
//     operator deletes it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/judgedrec"
)

// UnjudgedEvent is the type of the delivery event (and wake event) an
// unjudged update raises.
const UnjudgedEvent = "gitplus.unjudged"

// UnjudgedFile holds the alarm records, relative to the git directory.
const UnjudgedFile = "gitplus/alarms/unjudged.log"

// AlarmBannerAge is how long the page shows an alarm.
const AlarmBannerAge = 7 * 24 * time.Hour

const unjudgedMax = 256 << 10

// Unjudged is one update that moved a protected ref without git+'s
// judgement.
type Unjudged struct {
	Time   time.Time `json:"time"`
	Ref    string    `json:"ref"`
	Old    string    `json:"old"`
	New    string    `json:"new"`
	Pusher string    `json:"pusher,omitempty"` // what the host said of the pusher (GL_USER=alice), if anything
}

// Line is the alarm's text.
func (u Unjudged) Line() string {
	who := ""
	if u.Pusher != "" {
		who = " (pushed by " + u.Pusher + ")"
	}
	return fmt.Sprintf("%s moved %s → %s at %s%s without git+'s judgement: git+ is not in this repository's pre-receive; nothing checked the push's signatures, reviews or checks", u.Ref, shortID(u.Old), shortID(u.New), u.Time.UTC().Format(time.RFC3339), who)
}

func shortID(h string) string {
	if len(h) > 12 {
		h = h[:12]
	}
	if strings.Trim(h, "0") == "" {
		return "(none)"
	}
	return h
}

// FindUnjudged returns the updates of ups (the post-receive's) that moved a
// protected ref with no pre-receive record.
func FindUnjudged(gitDir string, ups []policy.Update, pusher string, now time.Time) ([]Unjudged, error) {
	recs := make([]judgedrec.Update, len(ups))
	for i, u := range ups {
		recs[i] = judgedrec.Update{Ref: u.Ref, Old: u.Old.String(), New: u.New.String()}
	}
	judged, rerr := judgedrec.Consume(gitDir, recs, now)
	var missing []policy.Update
	for i, u := range ups {
		if !judged[i] {
			missing = append(missing, u)
		}
	}
	if len(missing) == 0 {
		return nil, rerr
	}
	st, err := receive.ReadTrust(gitDir)
	if err != nil {
		return nil, errors.Join(rerr, err)
	}
	if st == nil {
		return nil, rerr // not a git+ repository (yet): nothing is protected
	}
	var out []Unjudged
	for _, u := range missing {
		ref := u.Ref
		if t, err := receive.SymbolicTarget(gitDir, ref); err == nil && t != "" {
			ref = t
		}
		if _, prot := st.Rules.For(ref); !prot && !strings.HasPrefix(ref, "refs/hub/") {
			continue
		}
		out = append(out, Unjudged{Time: now.UTC(), Ref: u.Ref, Old: u.Old.String(), New: u.New.String(), Pusher: pusher})
	}
	return out, rerr
}

// RecordUnjudged appends the alarms to gitDir's records.
func RecordUnjudged(gitDir string, us []Unjudged) error {
	if len(us) == 0 {
		return nil
	}
	var b bytes.Buffer
	for _, u := range us {
		line, err := json.Marshal(u)
		if err != nil {
			return err
		}
		b.Write(append(line, '\n'))
	}
	return appendRecords(gitDir, UnjudgedFile, unjudgedMax, b.Bytes(), "the unjudged-update alarm")
}

// ReadUnjudged returns gitDir's alarm records, oldest first.
func ReadUnjudged(gitDir string) ([]Unjudged, error) {
	return readRecords(gitDir, UnjudgedFile, "the alarms", func(u Unjudged) bool { return u.Ref != "" },
		func(u Unjudged) time.Time { return u.Time })
}

// RecentUnjudged is the alarms of the last AlarmBannerAge before now,
// newest first: what the page's banner shows.
func RecentUnjudged(gitDir string, now time.Time) []Unjudged {
	all, _ := ReadUnjudged(gitDir)
	var out []Unjudged
	for i := len(all) - 1; i >= 0; i-- {
		if now.Sub(all[i].Time) <= AlarmBannerAge {
			out = append(out, all[i])
		}
	}
	return out
}

// UnjudgedLabel is the ref label an alarm counts under in /metrics: the
// branch, or the kind of hub ref (refs/hub/pr/*, refs/hub/queue/*), so
// that pull request ids do not become label values.
func UnjudgedLabel(ref string) string {
	for _, p := range []string{"refs/hub/pr/", "refs/hub/queue/"} {
		if strings.HasPrefix(ref, p) {
			return p + "*"
		}
	}
	return ref
}

// RaiseUnjudged raises the alarms of one post-receive into gitDir: the
// pusher's line (on stderr), the log's (returned), the record, the status
// ref. The delivery event is the caller's.
func RaiseUnjudged(gitDir string, stderr io.Writer, us []Unjudged) (logLines []string) {
	if err := RecordUnjudged(gitDir, us); err != nil {
		logLines = append(logLines, err.Error())
	}
	for _, u := range us {
		line := u.Line()
		logLines = append(logLines, "ALARM: "+line)
		if stderr != nil {
			fmt.Fprintf(stderr, "git+: ALARM: %s. The server's operator must put git+ back (git+ hook check says how) and audit the branch (git+ verify --branch %s).\n",
				line, strings.TrimPrefix(u.Ref, "refs/heads/"))
		}
	}
	if err := PublishStatus(gitDir); err != nil {
		logLines = append(logLines, err.Error())
	}
	return logLines
}
