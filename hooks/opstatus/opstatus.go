package opstatus

// The server's published status (docs/operating.md "Where operators and
// users see it"): the wake rules failing now and the recent
// unjudged-update alarms, written as a ref so that a clone over any
// transport (gitolite's ssh, http-backend) sees them with `git+ queue
// show`, as the server's own page and /metrics do.
//
// Decisions:
//   - StatusRef (outside refs/hub/, so no hook judges it and no event log
//     holds it) points at a commit without parents whose tree holds one
//     file, status.json (ServerStatus). The server writes it directly
//     (objects, then git update-ref with the expected old value, retried
//     on a lost race): only after a wake rule's outcome or an alarm, and
//     only when the document changed; never when there is nothing to say
//     and nothing was said before.
//   - Clones fetch it with the hub refs (hubrefs.Fetch's refspec
//     refs/gitplus/status/*). It is informational and unsigned: whoever may
//     push that ref may change it, so nothing decides anything from it.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/gitio"
)

// StatusRef is the ref the server publishes its status under.
const StatusRef = "refs/gitplus/status/server"

// statusFile is the file of the status commit's tree.
const statusFile = "status.json"

// ServerStatus is the published document.
type ServerStatus struct {
	WakeFailures []WakeFailure `json:"wakeFailures"`
	Unjudged     []Unjudged    `json:"unjudged"`
}

// CurrentStatus computes gitDir's status from its records, at now.
func CurrentStatus(gitDir string, now time.Time) ServerStatus {
	fs, _ := WakeFailingIn(gitDir)
	s := ServerStatus{WakeFailures: fs, Unjudged: RecentUnjudged(gitDir, now)}
	if s.WakeFailures == nil {
		s.WakeFailures = []WakeFailure{}
	}
	if s.Unjudged == nil {
		s.Unjudged = []Unjudged{}
	}
	return s
}

// PublishStatus writes gitDir's current status to StatusRef when it
// changed.
func PublishStatus(gitDir string) error {
	for attempt := 0; attempt < 5; attempt++ {
		old, cur, _ := readStatus(gitDir)
		s := CurrentStatus(gitDir, time.Now())
		doc, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if bytes.Equal(doc, cur) || (old.IsZero() && len(s.WakeFailures)+len(s.Unjudged) == 0) {
			return nil
		}
		blob, err := gitio.WriteLooseObject(gitDir, plumbing.BlobObject, doc)
		if err != nil {
			return fmt.Errorf("publishing the server's status in %s: %w", gitDir, err)
		}
		tree, err := gitio.WriteLooseObject(gitDir, plumbing.TreeObject, append([]byte("100644 "+statusFile+"\x00"), blob[:]...))
		if err != nil {
			return fmt.Errorf("publishing the server's status in %s: %w", gitDir, err)
		}
		when := fmt.Sprintf("%d +0000", time.Now().Unix())
		commit := fmt.Sprintf("tree %s\nauthor git+ server <git+@localhost> %s\ncommitter git+ server <git+@localhost> %s\n\ngit+ server status: %d failing wake rules, %d unjudged updates\n",
			tree, when, when, len(s.WakeFailures), len(s.Unjudged))
		id, err := gitio.WriteLooseObject(gitDir, plumbing.CommitObject, []byte(commit))
		if err != nil {
			return fmt.Errorf("publishing the server's status in %s: %w", gitDir, err)
		}
		err = gitio.SwapRef(context.Background(), gitDir, StatusRef, old, id, nil)
		if errors.Is(err, gitio.ErrPushStale) {
			continue
		}
		return err
	}
	return fmt.Errorf("publishing the server's status in %s: %s kept moving", gitDir, StatusRef)
}

// readStatus reads StatusRef of gitDir: its id and the document's bytes.
func readStatus(gitDir string) (plumbing.Hash, []byte, error) {
	id, err := gitio.ReadRef(gitDir, StatusRef)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	store, err := gitio.OpenStore(gitDir, gitio.QuarantineEnv{})
	if err != nil {
		return id, nil, err
	}
	defer store.Close()
	t, raw, err := store.ReadRaw(id)
	if err != nil || t != plumbing.CommitObject || !bytes.HasPrefix(raw, []byte("tree ")) || len(raw) < 45 {
		return id, nil, fmt.Errorf("%s is not a status commit", StatusRef)
	}
	tree, err := hex.DecodeString(string(raw[5:45]))
	if err != nil {
		return id, nil, err
	}
	t, raw, err = store.ReadRaw(plumbing.Hash(tree))
	name := []byte("100644 " + statusFile + "\x00")
	if err != nil || t != plumbing.TreeObject || !bytes.HasPrefix(raw, name) || len(raw) < len(name)+20 {
		return id, nil, fmt.Errorf("%s has no %s", StatusRef, statusFile)
	}
	t, raw, err = store.ReadRaw(plumbing.Hash(raw[len(name) : len(name)+20]))
	if err != nil || t != plumbing.BlobObject {
		return id, nil, fmt.Errorf("%s: %s cannot be read", StatusRef, statusFile)
	}
	return id, raw, nil
}

// PublishedStatus is the status StatusRef of gitDir (a clone: fetched
// from the server with the hub refs) says; false when there is none.
func PublishedStatus(gitDir string) (ServerStatus, bool) {
	var s ServerStatus
	_, doc, err := readStatus(gitDir)
	if err != nil || json.Unmarshal(doc, &s) != nil {
		return s, false
	}
	return s, true
}

// WakeFailuresOf are a server's failing wake rules: read from its git
// directory server when that is on this machine, else from the status it
// published, fetched into the repository gitDir.
func WakeFailuresOf(server, gitDir string) []WakeFailure {
	if server != "" {
		fs, _ := WakeFailingIn(server)
		return fs
	}
	return PublishedWakeFailures(gitDir)
}

// PublishedWakeFailures is PublishedStatus's failing wake rules.
func PublishedWakeFailures(gitDir string) []WakeFailure {
	s, _ := PublishedStatus(gitDir)
	return s.WakeFailures
}
