package hubrefs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/matryer/is"
)

func refOf(t testing.TB, gitDir, ref string) plumbing.Hash {
	t.Helper()
	h, err := localRef(gitDir, ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func ticker(start int64) func() time.Time {
	n := start
	return func() time.Time { n++; return time.Unix(n, 0) }
}

func TestAppendLocal(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	repo := bareRepo(t)
	ctx := context.Background()
	opts := AppendOptions{GitDir: repo, Ref: "refs/hub/pr/1", Payload: closed(), Signer: quickSigner(), Name: "alice", Now: ticker(1700000000)}

	first, err := Append(ctx, opts)
	is.NoErr(err)
	is.Equal(refOf(t, repo, opts.Ref), first)
	opts.Payload = Base{Type: TypePRReopened, Repo: testRepo}
	second, err := Append(ctx, opts)
	is.NoErr(err)
	is.Equal(refOf(t, repo, opts.Ref), second)

	log, err := ReadLog(newLooseStore(repo), second, Ceilings{})
	is.NoErr(err)
	is.Equal(len(log), 2)
	is.Equal(log[0].ID, first)
	is.Equal(log[0].Parents, []plumbing.Hash(nil))
	is.Equal(log[1].Parents, []plumbing.Hash{first})
	is.Equal(log[1].Type, TypePRReopened)
	git(t, repo, "fsck", "--strict", "--no-dangling")

	// payload checks happen before anything is written
	opts.Payload = Base{Type: "nope", Repo: testRepo}
	_, err = Append(ctx, opts)
	is.True(errors.Is(err, ErrUnknownType))
	opts.Payload = closed()
	opts.Ref = "refs/heads/main"
	_, err = Append(ctx, opts)
	is.True(errors.Is(err, ErrMalformed))
}

// TestAppendRetriesOnMovedRef: another writer appends between our read of
// the ref and our push; the push fails on the expected old value and the
// event is rebuilt on the new tip.
func TestAppendRetriesOnMovedRef(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	repo := bareRepo(t)
	ctx := context.Background()
	ref := "refs/hub/pr/2"
	base, err := Append(ctx, AppendOptions{GitDir: repo, Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "alice", Now: ticker(1700000000)})
	is.NoErr(err)

	var theirs plumbing.Hash
	calls := 0
	inner := ticker(1700000100)
	racing := func() time.Time {
		calls++
		if calls == 1 { // after we read the ref, before we push
			var err error
			theirs, err = Append(ctx, AppendOptions{GitDir: repo, Ref: ref, Payload: Base{Type: TypePRReopened, Repo: testRepo},
				Signer: quickSigner(), Name: "bob", Now: ticker(1700000050)})
			is.NoErr(err)
		}
		return inner()
	}
	ours, err := Append(ctx, AppendOptions{GitDir: repo, Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "alice", Now: racing})
	is.NoErr(err)
	is.Equal(calls, 2) // built twice
	is.Equal(refOf(t, repo, ref), ours)
	log, err := ReadLog(newLooseStore(repo), ours, Ceilings{})
	is.NoErr(err)
	is.Equal(len(log), 3)
	is.Equal(log[0].ID, base)
	is.Equal(log[1].ID, theirs)
	is.Equal(log[2].Parents, []plumbing.Hash{theirs}) // landed on the new tip, nothing lost

	// a ref that moves on every attempt: give up with ErrStale
	always := func() time.Time {
		_, err := Append(ctx, AppendOptions{GitDir: repo, Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "bob", Now: ticker(time.Now().UnixNano())})
		is.NoErr(err)
		return time.Unix(1700000200, 0)
	}
	_, err = Append(ctx, AppendOptions{GitDir: repo, Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "alice", Now: always, Attempts: 3})
	is.True(errors.Is(err, ErrStale))
	is.True(strings.Contains(err.Error(), ref))
}

func installHook(t testing.TB, repo, script string) {
	t.Helper()
	path := filepath.Join(repo, "hooks", "pre-receive")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestAppendRefusedByHook(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	repo := bareRepo(t)
	installHook(t, repo, "cat >/dev/null\necho 'git+: refused refs/hub/pr/3: [no-trust] run git+ init first' >&2\necho 'other noise' >&2\nexit 1\n")
	_, err := Append(context.Background(), AppendOptions{GitDir: repo, Ref: "refs/hub/pr/3", Payload: closed(), Signer: quickSigner(), Name: "alice"})
	is.True(errors.Is(err, ErrRefused))
	var re *RefusedError
	is.True(errors.As(err, &re))
	is.Equal(re.Lines, []string{"git+: refused refs/hub/pr/3: [no-trust] run git+ init first"})
	is.Equal(re.Status, "pre-receive hook declined")
	is.True(strings.Contains(err.Error(), "[no-trust]"))
	is.Equal(refOf(t, repo, "refs/hub/pr/3"), plumbing.ZeroHash)
}

func TestAppendThroughClone(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	server := bareRepo(t)
	ref := "refs/hub/queue/q1"
	first, err := Append(ctx, AppendOptions{GitDir: server, Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "alice", Now: ticker(1700000000)})
	is.NoErr(err)

	work := filepath.Join(t.TempDir(), "work")
	git(t, ".", "clone", "-q", server, work)
	// the clone has no refs/hub yet: the first push expects the ref absent,
	// is stale, fetches, and lands on the server's tip
	second, err := Append(ctx, AppendOptions{GitDir: work, Remote: "origin", Ref: ref, Payload: Base{Type: TypePRReopened, Repo: testRepo},
		Signer: quickSigner(), Name: "carol", Now: ticker(1700000010)})
	is.NoErr(err)
	is.Equal(refOf(t, server, ref), second)
	is.Equal(refOf(t, filepath.Join(work, ".git"), ref), second) // the clone's copy follows a successful push
	log, err := ReadLog(newLooseStore(server), second, Ceilings{})
	is.NoErr(err)
	is.Equal(len(log), 2)
	is.Equal(log[1].Parents, []plumbing.Hash{first})

	// Fetch brings every hub ref over
	other, err := Append(ctx, AppendOptions{GitDir: server, Ref: "refs/hub/pr/9", Payload: closed(), Signer: quickSigner(), Name: "alice"})
	is.NoErr(err)
	is.NoErr(Fetch(ctx, work, "origin"))
	is.Equal(refOf(t, filepath.Join(work, ".git"), "refs/hub/pr/9"), other)
	is.Equal(refOf(t, filepath.Join(work, ".git"), ref), second)

	// a refusal from the remote's hook carries its lines, "remote: " removed
	installHook(t, server, "cat >/dev/null\necho 'git+: refused refs/hub/queue/q1: [bad-signer] key not a member' >&2\nexit 1\n")
	_, err = Append(ctx, AppendOptions{GitDir: work, Remote: "origin", Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "carol"})
	var re *RefusedError
	is.True(errors.As(err, &re))
	is.Equal(re.Lines, []string{"git+: refused refs/hub/queue/q1: [bad-signer] key not a member"})
	is.Equal(refOf(t, server, ref), second)

	// an unreachable remote is an error, not a refusal or a retry loop
	_, err = Append(ctx, AppendOptions{GitDir: work, Remote: filepath.Join(t.TempDir(), "nowhere"), Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "carol"})
	is.True(err != nil)
	is.True(!errors.Is(err, ErrRefused) && !errors.Is(err, ErrStale))
}

func TestLocalRefExactName(t *testing.T) {
	is := is.New(t)
	repo := bareRepo(t)
	id, err := Append(context.Background(), AppendOptions{GitDir: repo, Ref: "refs/hub/pr/1/x", Payload: closed(), Signer: quickSigner(), Name: "alice"})
	is.NoErr(err)
	is.Equal(refOf(t, repo, "refs/hub/pr/1/x"), id)
	is.Equal(refOf(t, repo, "refs/hub/pr/1"), plumbing.ZeroHash) // not the ref below it
}

// TestAppendRetriesTransportFailure: the receiving side dies mid-push (the
// hook kills receive-pack, as a dropped connection would): the push ends
// without a report, Append reads the ref back, finds its event absent and
// pushes again; the event lands once.
func TestAppendRetriesTransportFailure(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	repo := bareRepo(t)
	mark := filepath.Join(t.TempDir(), "killed")
	installHook(t, repo, "cat >/dev/null\nif [ ! -e "+mark+" ]; then : >"+mark+"; kill -9 $PPID; fi\nexit 0\n")
	ref := "refs/hub/pr/3"
	id, err := Append(context.Background(), AppendOptions{GitDir: repo, Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "alice", Sleep: func(time.Duration) {}})
	is.NoErr(err)
	_, statErr := os.Stat(mark)
	is.NoErr(statErr) // the first push was killed
	is.Equal(refOf(t, repo, ref), id)
	log, err := ReadLog(newLooseStore(repo), id, Ceilings{})
	is.NoErr(err)
	is.Equal(len(log), 1)
}

// TestAppendPatienceCountsProgress: the patience bounds time without
// progress. A writer that loses race after race while others land keeps
// trying (up to MaxPatience); one whose pushes fail while the ref stands
// still gives up after Patience. The clock is fake: each backoff advances
// it by a minute.
func TestAppendPatienceCountsProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ref := "refs/hub/pr/3"
	type world struct {
		repo      string
		now       time.Time
		attempts  int
		loseFirst int // attempts on which another writer lands first
	}
	run := func(w *world) error {
		racing := func() time.Time { // called after our read of the tip, before our push
			w.attempts++
			if w.attempts <= w.loseFirst {
				if _, err := Append(ctx, AppendOptions{GitDir: w.repo, Ref: ref, Payload: Base{Type: TypePRReopened, Repo: testRepo},
					Signer: quickSigner(), Name: "bob", Now: ticker(int64(1700000000 + 10*w.attempts))}); err != nil {
					t.Fatal(err)
				}
			}
			return time.Unix(int64(1700001000+w.attempts), 0)
		}
		_, err := Append(ctx, AppendOptions{GitDir: w.repo, Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "alice", Now: racing,
			Clock: func() time.Time { return w.now }, Sleep: func(time.Duration) { w.now = w.now.Add(time.Minute) }})
		return err
	}
	newWorld := func(loseFirst int) *world {
		w := &world{repo: bareRepo(t), now: time.Unix(1800000000, 0), loseFirst: loseFirst}
		if _, err := Append(ctx, AppendOptions{GitDir: w.repo, Ref: ref, Payload: closed(), Signer: quickSigner(), Name: "alice", Now: ticker(1700000000)}); err != nil {
			t.Fatal(err)
		}
		return w
	}

	// Six lost races, six minutes: far over the two-minute patience, but the
	// ref moved each time, so the seventh attempt lands.
	w := newWorld(6)
	if err := run(w); err != nil {
		t.Fatalf("a writer that lost 6 races while others landed gave up: %v", err)
	}
	if w.attempts != 7 {
		t.Errorf("%d attempts, want 7", w.attempts)
	}

	// Losing forever while others land: bounded by MaxPatience (ten minutes).
	w = newWorld(1 << 30)
	err := run(w)
	if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("err = %v, want ErrStale giving up", err)
	}
	if w.attempts < 10 || w.attempts > 12 {
		t.Errorf("gave up after %d attempts, want about ten (one a minute, ten minutes)", w.attempts)
	}

	// Refused as moved by the hook while the ref stands still: no
	// progress, so the two-minute patience ends it.
	w = newWorld(0)
	installHook(t, w.repo, "echo 'git+: refused "+ref+": [ref-moved] "+ref+" moved' >&2; exit 1\n")
	err = run(w)
	if !errors.Is(err, ErrStale) {
		t.Fatalf("err = %v, want ErrStale", err)
	}
	if w.attempts < 2 || w.attempts > 4 {
		t.Errorf("gave up after %d attempts, want about three (two minutes without progress)", w.attempts)
	}
}

// TestAppendLocalSendsNoPushOptions: a push into "." sends no push options
// over the wire (with options and an empty command list git would die of
// SIGPIPE, receive/gitio/pushenv.go) — a receiver that does not advertise push
// options still takes it — and its hooks still see the options.
func TestAppendLocalSendsNoPushOptions(t *testing.T) {
	t.Parallel()
	repo := bareRepo(t)
	git(t, repo, "config", "receive.advertisePushOptions", "false")
	seen := filepath.Join(t.TempDir(), "seen")
	installHook(t, repo, `printf '%s' "$GITPLUS_PUSH_OPTIONS" >`+seen+"\n")
	_, err := Append(context.Background(), AppendOptions{GitDir: repo, Ref: "refs/hub/pr/9", Payload: closed(), Signer: quickSigner(), Name: "alice",
		Now: ticker(1700000000), PushOptions: []string{"gitplus-wake=q", "gitplus.no-notify"}})
	if err != nil {
		t.Fatalf("append with push options into a receiver without them: %v", err)
	}
	got, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "gitplus-wake=q\ngitplus.no-notify" {
		t.Errorf("the hook saw %q", got)
	}
}
