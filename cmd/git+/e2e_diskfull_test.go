package main

// End-to-end tests on a full disk (docs/operating.md, "A full disk"): the
// directories git+ writes under the git directory are mounted as small
// tmpfs file systems and filled, as a server whose disk filled up; pushes
// go on, and what git+ could not write it makes good once space is back.
// They need root and mount(2): elsewhere they skip, saying so.

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/receive/hookrec"
)

// fullDisk is a small tmpfs mounted on a directory of the git directory.
type fullDisk struct {
	t      *testing.T
	dir    string
	filler string
}

// mountSmall mounts a tmpfs of size bytes on dir (created; what it held is
// copied in), or skips the test when mounting is not permitted.
func mountSmall(t *testing.T, dir string, size int) *fullDisk {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("disk-full tests mount a small tmpfs: they need root")
	}
	held := dir + ".held"
	if _, err := os.Stat(dir); err == nil {
		if err := os.Rename(dir, held); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("disk-full tests mount a small tmpfs, which is not permitted here: mount: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	if _, err := os.Stat(held); err == nil {
		if out, err := exec.Command("cp", "-a", held+"/.", dir+"/").CombinedOutput(); err != nil {
			t.Fatalf("copying %s into the tmpfs: %v: %s", held, err, out)
		}
	}
	return &fullDisk{t: t, dir: dir, filler: filepath.Join(dir, ".filler")}
}

// fill writes to the filler file until the file system is full.
func (d *fullDisk) fill() {
	d.t.Helper()
	f, err := os.OpenFile(d.filler, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				d.t.Fatalf("filling %s: %v", d.dir, err)
			}
			break
		}
	}
	// The last bytes: a write of one byte fills a page left part-used.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			break
		}
	}
}

// free removes the filler.
func (d *fullDisk) free() {
	d.t.Helper()
	if err := os.Remove(d.filler); err != nil {
		d.t.Fatal(err)
	}
}

type mirrorOut struct {
	Mirrors []struct {
		Name       string `json:"name"`
		Behind     bool   `json:"behind"`
		RefsBehind bool   `json:"refs_behind"`
		LastError  string `json:"last_error"`
	} `json:"mirrors"`
}

// TestDiskFullMirrorFollowsRefs: with the delivery spool's disk full, a
// push lands but post-receive cannot record the change for the mirror.
// The mirror still gets the push (the worker sees its refs differ from
// what it last carried), `git+ mirror status` never says "in step" while
// the mirror lacks it, and once space is back the state is recorded and
// the status is in step.
func TestDiskFullMirrorFollowsRefs(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	disk := mountSmall(t, filepath.Join(w.origin, filepath.FromSlash(delivery.SpoolDir)), 256<<10)
	t.Cleanup(func() { stopWorker(t, w.origin) })
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	w.git(filepath.Dir(mirror), "init", "-q", "--bare", mirror)
	writeJSONFile(t, filepath.Join(w.origin, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{
		{Name: "m", URL: mirror, BackoffSeconds: 0.05, BackoffMaxSeconds: 0.2},
	}})
	status := func() mirrorOut {
		t.Helper()
		out, errs, code := w.gp("", w.origin, "", "mirror", "status", "--json")
		var m mirrorOut
		if err := json.Unmarshal([]byte(out), &m); err != nil || len(m.Mirrors) != 1 {
			t.Fatalf("mirror status --json (exit %d): %v\n%s\n%s", code, err, out, errs)
		}
		return m
	}
	c := w.commit(nil, map[string]string{"a": "0"}, "c0")
	if out, err := w.push("origin", c+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	if !waitFor(60*time.Second, func() bool { return hubAndHeads(w, w.origin) == hubAndHeads(w, mirror) && !status().Mirrors[0].Behind }) {
		t.Fatalf("the mirror did not follow the first push: %+v\nlog:\n%s", status(), readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}

	disk.fill()
	c = w.commit([]string{c}, map[string]string{"a": "1"}, "c1")
	out, err := w.push("origin", c+":refs/heads/main")
	if err != nil {
		t.Fatalf("a push on a full disk: %v\n%s", err, out)
	}
	if !strings.Contains(out, "recording a change for mirror m") {
		t.Logf("post-receive did not report the failed record (the disk had room?):\n%s", out)
	}
	want := hubAndHeads(w, w.origin)
	// Never "in step" while the mirror lacks the push; and it gets it.
	if !waitFor(60*time.Second, func() bool {
		st := status()
		have := hubAndHeads(w, mirror)
		if !st.Mirrors[0].Behind && have != want {
			t.Fatalf("mirror status says in step while the mirror lacks the push:\n%+v\nmirror:\n%s\norigin:\n%s", st, have, want)
		}
		return have == want
	}) {
		t.Fatalf("the mirror never got the push made while the spool's disk was full: %+v\nlog:\n%s", status(), readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}
	disk.free()
	// Space is back: the worker records what it carried; no push needed.
	if !waitFor(60*time.Second, func() bool { return !status().Mirrors[0].Behind }) {
		t.Fatalf("mirror status after space came back: %+v\nlog:\n%s", status(), readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}
	if have := hubAndHeads(w, mirror); have != want {
		t.Fatalf("in step, but the mirror holds\n%s\nwant\n%s", have, want)
	}
}

// TestDiskFullHookRecords: the pre-receive record file and the fold cache
// on a full disk. The record a full disk cuts short (at a page boundary,
// as the issue saw it: the file ending mid-record at 4096 bytes) does not
// make /metrics misread the records after it, and pushes are judged as
// ever while neither the fold cache nor the records can be written.
func TestDiskFullHookRecords(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	recs := mountSmall(t, filepath.Join(w.origin, "gitplus", "metrics"), 64<<10)
	cache := mountSmall(t, filepath.Join(w.origin, "gitplus", "foldcache"), 64<<10)
	// 85 records end the file 16 bytes short of a page: the next record's
	// write fills that page and finds no room for the next one.
	p := filepath.Join(w.origin, filepath.FromSlash(hookrec.File))
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for i := 0; i < 85; i++ {
		if err := hookrec.Append(w.origin, hookrec.Record{Verdict: hookrec.Accepted, Duration: time.Millisecond, End: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	recs.fill()
	cache.fill()
	c := w.commit(nil, map[string]string{"a": "0"}, "c0")
	if out, err := w.push("origin", c+":refs/heads/main"); err != nil {
		t.Fatalf("a push with the records' and the fold cache's disks full: %v\n%s", err, out)
	}
	if fi, err := os.Stat(p); err != nil || fi.Size()%hookrec.Size == 0 {
		t.Logf("the record file is %v (%v): no record was cut short here", fi, err)
	}
	w.prOpen("admin", "refs/heads/main", c, "a record while the disks are full")
	recs.free()
	cache.free()
	for i := 1; i <= 3; i++ {
		c = w.commit([]string{c}, map[string]string{"a": strconv.Itoa(i)}, "c")
		if out, err := w.push("origin", c+":refs/heads/main"); err != nil {
			t.Fatalf("push %d: %v\n%s", i, err, out)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	_, skipped := hookrec.Parse(b, func(r hookrec.Record) {
		if r.Verdict == hookrec.Accepted {
			accepted++
		}
	})
	if accepted < 85+3 {
		t.Fatalf("%d accepted records read, want at least 88 (skipped %d bytes)", accepted, skipped)
	}
	s := startServe(t, w.bin, fixtures.GitEnv(w.home), filepath.Dir(w.origin))
	for i := 0; i < 2; i++ {
		status, expo := scrape(t, s.URL, "", "")
		if status != 200 {
			t.Fatalf("scrape %d: %d\n%s", i+1, status, expo)
		}
		if v := mustSample(t, expo, "gitplus_hook_duration_seconds_count", "repository", filepath.Base(w.origin), "verdict", "accepted"); int(v) != accepted {
			t.Fatalf("scrape %d: %v accepted pushes, the file holds %d\n%s", i+1, v, accepted, hookRecords(t, w.origin))
		}
	}
}

// TestDiskFullWebhookNotResent: a delivery answered 200 while the spool's
// disk is full cannot be recorded as delivered. The worker keeps what it
// did in memory and writes it again at each look, sending nothing more;
// once space is back the record says delivered, after one request.
func TestDiskFullWebhookNotResent(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	disk := mountSmall(t, filepath.Join(w.origin, filepath.FromSlash(delivery.SpoolDir)), 256<<10)
	t.Cleanup(func() { stopWorker(t, w.origin) })
	entered := make(chan struct{}, 64)
	release := make(chan struct{})
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if requests.Add(1) == 1 {
			entered <- struct{}{}
			<-release
		}
	}))
	t.Cleanup(srv.Close)
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open)
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "h", URL: srv.URL, Secret: "k", TimeoutSeconds: 120, BackoffSeconds: 0.05, BackoffMaxSeconds: 0.2},
	}})
	c := w.commit(nil, map[string]string{"a": "0"}, "c0")
	if out, err := w.push("origin", c+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	select {
	case <-entered:
	case <-time.After(60 * time.Second):
		t.Fatalf("the worker never reached the receiver; log:\n%s", readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}
	disk.fill()
	open() // answered 200 now, with no room to record it
	// The worker has failed to record it several times over.
	logPath := filepath.Join(w.origin, delivery.WorkerLog)
	if !waitFor(60*time.Second, func() bool { return strings.Count(readFile(logPath), "webhook h: delivery") >= 3 }) {
		t.Fatalf("the worker did not report the record it could not write; log:\n%s", readFile(logPath))
	}
	disk.free()
	if !waitFor(60*time.Second, func() bool {
		d := w.deliveries()
		return len(d.Deliveries) == 1 && d.Deliveries[0].State == delivery.StateDelivered
	}) {
		t.Fatalf("not recorded delivered after space came back: %+v\nlog:\n%s", w.deliveries(), readFile(logPath))
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("the receiver got %d requests for one delivery answered 200 the first time; log:\n%s", n, readFile(logPath))
	}
}
