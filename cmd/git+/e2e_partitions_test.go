package main

// A partitioned queue end to end (docs/queue.md, "Partitions and lanes";
// docs/boundary.md, "Partition steps"): from developers' clones against
// git+ serve, with wake rules running the queue and check workers in
// their own clones running the partitions' checks.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
)

const e2ePartitionRules = `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "queueDepth": 8,
  "partitions": [
    {"name": "web", "paths": ["web/**"], "reads": ["package.json"]},
    {"name": "api", "paths": ["api/**", "proto/**"], "reads": ["go.mod"]},
    {"name": "docs", "paths": ["docs/**"]}]}}}`

// partitionCI is the check command: it checks what the partition the queue
// names reads (GITPLUS_CHECK_PARTITION; everything when unset): a
// BROKEN-* file there fails it, a FLAKY-* file fails its first run. It
// logs the partition and the changed paths it was given.
const partitionCI = `case "${GITPLUS_CHECK_PARTITION:-}" in
  web) scope="web package.json" ;;
  api) scope="api proto go.mod" ;;
  docs) scope="docs" ;;
  *) scope="." ;;
esac
paths=""
[ -n "${GITPLUS_CHECK_PATHS:-}" ] && paths=$(tr '\000' ' ' <"$GITPLUS_CHECK_PATHS")
echo "${GITPLUS_CHECK_PARTITION:-whole}: $paths" >>"$STATE/runs"
for f in $(find $scope -name 'BROKEN-*' 2>/dev/null); do echo "broken: $f"; exit 1; done
for f in $(find $scope -name 'FLAKY-*' 2>/dev/null); do
  n=$(cat "$STATE/$(basename $f)" 2>/dev/null || echo 0); echo $((n+1)) >"$STATE/$(basename $f)"
  [ "$n" -ge 1 ] || { echo flaked; exit 1; }
done
echo passed`

// TestPartitionedQueueE2E: three partitions, pull requests entered at once
// (some broken, some global, some flaky) from a developer's clone against
// git+ serve, three check workers: the lanes drain, landing their
// candidates as partition steps on the tip other lanes moved, without CI
// running them again; a mirror's verify --branch main passes; and, pushed
// by hand from the clone, each of these is refused with main unchanged: a
// partition step whose inputs differ from its tested candidate's, a
// pull request of lane web that also changes api/, a lane candidate landed
// after another landing changed one of its reads, and a Git-Plus-Tested
// naming another pull request's candidate, or a red one.
// GITPLUS_PARTITION_DRAIN=N enters N pull requests (default 12; the
// issue's acceptance is 30).
func TestPartitionedQueueE2E(t *testing.T) {
	t.Parallel()
	nPRs := 12
	if v := os.Getenv("GITPLUS_PARTITION_DRAIN"); v != "" {
		if _, err := fmt.Sscanf(v, "%d", &nPRs); err != nil || nPRs < 6 {
			t.Fatalf("GITPLUS_PARTITION_DRAIN=%q: want a number of pull requests, 6 or more", v)
		}
	}
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	root := settlingDir(t)
	bare := filepath.Join(root, "repo.git")
	e.ok(root, "admin", "init", bare)
	for _, m := range []struct{ name, cap string }{{"dev", "hub.pr"}, {"rev", "hub.review"}, {"ci", "hub.check:ci"}, {"q", "hub.queue"}} {
		e.ok(bare, "admin", "member", "add", m.name, "--key", e.keys[m.name].Path+".pub", "--cap", m.cap)
	}
	e.ok(bare, "admin", "member", "change", "dev", "--cap", "hub.pr", "--cap", "source.push")
	t.Cleanup(func() { stopWorker(t, bare) })
	queueRun := []string{"git+", "--key", e.keys["q"].Path, "queue", "run", "--target", "main"}
	writeJSONFile(t, filepath.Join(bare, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "queue-on-check", Ref: "refs/hub/pr/*", On: []string{"check.completed"}, Run: queueRun},
		{Name: "queue-on-entry", Ref: "refs/hub/queue/*", On: []string{"queue.entered"}, Run: queueRun},
	}})
	// The mirror lies outside serve's root: serve takes up a git+
	// repository it finds there, hooks and all.
	mirror := filepath.Join(settlingDir(t), "mirror.git")
	fixtures.Git(t, root, "init", "-q", "--bare", mirror)
	writeJSONFile(t, filepath.Join(bare, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{{Name: "mirror", URL: mirror}}})
	token := strings.TrimSpace(e.ok(bare, "admin", "member", "token", "issue", "dev"))
	ciToken := strings.TrimSpace(e.ok(bare, "admin", "member", "token", "issue", "ci"))
	s := startServe(t, e.bin, fixtures.GitEnv(e.home), root)

	// The monorepo, its rules, the queue.
	work := filepath.Join(t.TempDir(), "work")
	fixtures.Git(t, root, "init", "-q", "-b", "main", work)
	fixtures.Git(t, work, "remote", "add", "origin", strings.Replace(s.URL, "http://", "http://dev:"+token+"@", 1)+"/repo.git")
	write := func(files map[string]string) {
		t.Helper()
		for p, c := range files {
			f := filepath.Join(work, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(map[string]string{"web/index.js": "web\n", "api/main.go": "api\n", "proto/api.proto": "proto\n", "docs/README.md": "docs\n",
		"package.json": "{}\n", "go.mod": "module x\n", "README.md": "monorepo\n"})
	fixtures.Git(t, work, "add", ".")
	fixtures.Git(t, work, "commit", "-q", "-m", "base")
	fixtures.Git(t, work, "push", "-q", "origin", "main")
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(e2ePartitionRules), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(bare, "admin", "rules", "set", rules)
	qid := lastLine(e.ok(bare, "q", "queue", "open", "--target", "main"))

	// openPR pushes a branch changing files on main and opens an approved
	// pull request of it (not entered).
	openFrom := func(from, br string, files map[string]string) string {
		t.Helper()
		fixtures.Git(t, work, "checkout", "-q", "-B", br, from)
		write(files)
		fixtures.Git(t, work, "add", ".")
		fixtures.Git(t, work, "commit", "-q", "-m", br)
		fixtures.Git(t, work, "push", "-q", "-f", "origin", br)
		id := lastLine(e.ok(work, "dev", "pr", "open", "--base", "main", "--head", br, "--title", br))
		e.ok(work, "rev", "pr", "review", id, "--approve")
		return id
	}
	openPR := func(br string, files map[string]string) string { t.Helper(); return openFrom("origin/main", br, files) }

	// The pull requests: lanes web, api, docs in turn, every fifth global
	// (web and api at once, or a root file), every seventh broken in its
	// partition, every eleventh flaky.
	var ids []string
	var good []string
	broken := 0
	lanesOf := map[string]string{}
	fixtures.Git(t, work, "fetch", "-q", "origin")
	for i := 0; i < nPRs; i++ {
		dir := []string{"web", "api", "docs"}[i%3]
		name := fmt.Sprintf("f%d.txt", i)
		switch {
		case i%7 == 5:
			name, broken = fmt.Sprintf("BROKEN-%d", i), broken+1
		case i%11 == 4:
			name = fmt.Sprintf("FLAKY-%d", i)
		}
		files := map[string]string{dir + "/" + name: name + "\n"}
		lane := dir
		if i%5 == 3 {
			lane = "global"
			if i%2 == 0 {
				files["api/g"+name] = name + "\n"
			} else {
				files = map[string]string{"root-" + name: name + "\n"}
			}
		}
		id := openPR(fmt.Sprintf("feat%d", i), files)
		ids = append(ids, id)
		lanesOf[id] = lane
		for p := range files {
			if !strings.Contains(p, "BROKEN") {
				good = append(good, p)
			}
		}
	}
	// Three check workers, then every pull request entered at once.
	state := t.TempDir()
	env := append(fixtures.GitEnv(t.TempDir()), "STATE="+state)
	ciURL := strings.Replace(s.URL, "http://", "http://ci:"+ciToken+"@", 1) + "/repo.git"
	var workers []*workerProc
	for i := 0; i < 3; i++ {
		clone := filepath.Join(t.TempDir(), fmt.Sprintf("ci%d", i))
		fixtures.Git(t, root, "clone", "-q", ciURL, clone)
		workers = append(workers, startCheckWorker(t, e.bin, env, clone, e.keys["ci"].Path, []string{"--retries", "1", "--jobs", "2", "--pass-env", "STATE", "--cache", state}, "sh", "-c", partitionCI))
	}
	logs := func() string {
		var b strings.Builder
		for i, wk := range workers {
			fmt.Fprintf(&b, "--- worker %d\n%s", i, wk.Log())
		}
		return b.String()
	}
	start := time.Now()
	for _, id := range ids {
		e.ok(work, "q", "queue", "enter", id)
	}
	entered := time.Since(start)
	drained := func() bool {
		tree := fixtures.Git(t, bare, "ls-tree", "-r", "--name-only", "refs/heads/main")
		for _, f := range good {
			if !strings.Contains(tree, f) {
				return false
			}
		}
		return strings.Count(fixtures.Git(t, bare, "log", "--format=%B", "refs/hub/queue/"+qid), `"reason":"failed"`) >= broken
	}
	if !waitFor(time.Duration(120+20*nPRs)*time.Second, drained) {
		t.Fatalf("the queue did not drain\nmain: %s\nqueue:\n%s\n%s", fixtures.Git(t, bare, "ls-tree", "-r", "--name-only", "refs/heads/main"),
			fixtures.Git(t, bare, "log", "--format=%s %b", "refs/hub/queue/"+qid), logs())
	}
	t.Logf("%d pull requests (%d broken) entered in %v, drained %v after the last entry", nPRs, broken, entered.Round(time.Millisecond), (time.Since(start) - entered).Round(time.Millisecond))
	if tree := fixtures.Git(t, bare, "ls-tree", "-r", "--name-only", "refs/heads/main"); strings.Contains(tree, "BROKEN") {
		t.Fatalf("a broken pull request landed: %s", tree)
	}

	// The lanes: candidates recorded with their partition, checked with
	// it, and landed as partition steps on a moved tip without a check of
	// their own.
	partitionOf := map[string]string{} // candidate → partition, as recorded
	for _, line := range strings.Split(fixtures.Git(t, bare, "log", "--format=%b", "refs/hub/queue/"+qid), "\n") {
		var c hubrefs.QueueCandidate
		if json.Unmarshal([]byte(line), &c) == nil && c.Type == hubrefs.TypeQueueCandidate {
			partitionOf[c.Step] = c.Partition
		}
	}
	tested := 0
	for _, line := range strings.Split(fixtures.Git(t, bare, "log", "--first-parent", "--format=%H %(trailers:key=Git-Plus-Tested,valueonly,separator=)", "refs/heads/main"), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if _, ok := partitionOf[f[1]]; !ok {
			t.Errorf("partition step %s names %s, which the queue never published", f[0], f[1])
		}
		tested++
	}
	if tested == 0 {
		t.Errorf("no lane landed as a partition step on a tip another lane moved\nmain:\n%s", fixtures.Git(t, bare, "log", "--first-parent", "--format=%H %s", "refs/heads/main"))
	}
	runs := readFile(filepath.Join(state, "runs"))
	for _, want := range []string{"web: web/", "api: api/", "docs: docs/"} {
		if !strings.Contains(runs, want) {
			t.Errorf("no check ran as %q (GITPLUS_CHECK_PARTITION and GITPLUS_CHECK_PATHS):\n%s", want, runs)
		}
	}
	// No check ran on a landed partition step, and each pull request's
	// candidate was checked once, or twice when its first run was red: a
	// strict lane step red on its own runs once and the planner tries it
	// again, aside as a trial or in place (docs/queue.md, "A red strict
	// step tried aside"), and a trial on the tip its step stood on is that
	// very commit. Never a third time, never again after green.
	checked := map[string]bool{}
	for _, id := range ids {
		seen := map[string][]string{}
		for _, ev := range checkEvents(t, bare, hubrefs.PRRefPrefix+id) {
			if f := strings.Fields(ev); f[0] == hubrefs.TypeCheckCompleted && f[1] != "cancelled" {
				checked[f[2]] = true
				seen[f[2]] = append(seen[f[2]], f[1])
				if runs := seen[f[2]]; len(runs) > 2 || len(runs) == 2 && runs[0] == "success" {
					t.Errorf("pull request %s (%s): candidate %s checked %d times: %v", id, lanesOf[id], f[2], len(runs), runs)
				}
			}
		}
	}
	for _, line := range strings.Split(fixtures.Git(t, bare, "log", "--first-parent", "--format=%H %(trailers:key=Git-Plus-Tested,valueonly,separator=)", "refs/heads/main"), "\n") {
		if f := strings.Fields(line); len(f) == 2 && checked[f[0]] {
			t.Errorf("partition step %s was checked itself", f[0])
		}
	}
	t.Logf("main: %d partition steps among its landings; %d check runs (%d pull requests)", tested, strings.Count(runs, "\n"), nPRs)

	// queue stats and /metrics count per lane.
	var st queue.Stats
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "stats", "--target", "main", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	lanes := map[string]int{}
	for _, p := range st.Partitions {
		lanes[p.Partition] = p.Landed
	}
	if lanes["web"] == 0 || lanes["api"] == 0 || lanes["docs"] == 0 {
		t.Errorf("queue stats per lane: %+v", lanes)
	}
	if _, expo := scrape(t, s.URL, "", ""); !strings.Contains(expo, `gitplus_landings_total{partition="web",repository="repo.git",target="refs/heads/main"}`) {
		t.Errorf("/metrics has no landings of lane web:\n%s", expo)
	}

	// A mirror's verify --branch main passes.
	if !waitFor(60*time.Second, func() bool {
		out, err := fixtures.GitErr(t, root, nil, "--git-dir="+mirror, "rev-parse", "refs/heads/main")
		return err == nil && out == fixtures.Git(t, bare, "rev-parse", "refs/heads/main")
	}) {
		out, errOut, _ := e.run(bare, "", nil, "mirror", "status")
		t.Fatalf("the mirror did not follow main\n%s%s\n%s", out, errOut, readFile(filepath.Join(bare, "gitplus", "log", "delivery.log")))
	}
	if out, errOut, code := e.run(mirror, "", nil, "verify", "--branch", "main", "--no-fetch"); code != 0 {
		t.Fatalf("verify --branch main on the mirror: exit %d\n%s%s", code, out, errOut)
	}
	for _, wk := range workers {
		wk.stop(t)
	}

	// Refused with main unchanged, pushed by hand from the clone.
	fixtures.Git(t, work, "fetch", "-q", "origin")
	tip := func() string {
		return strings.TrimSpace(fixtures.Git(t, work, "ls-remote", "origin", "refs/heads/main"))[:40]
	}
	old := tip()
	gitOut := func(args ...string) string { t.Helper(); return strings.TrimSpace(fixtures.Git(t, work, args...)) }
	// candidate builds a merge step of head on parent (as a person would,
	// with git merge-tree and commit-tree), msg its message.
	commit := func(parent, head, msg string) string {
		t.Helper()
		tree := gitOut("merge-tree", "--write-tree", parent, head)
		return gitOut("commit-tree", tree, "-p", parent, "-p", head, "-m", msg)
	}
	// check records ci's conclusion on rev of pull request id (the
	// revision pushed first so the server holds it).
	check := func(id, rev string, pass bool) {
		t.Helper()
		fixtures.Git(t, work, "push", "-q", "-f", "origin", rev+":refs/heads/tmp/"+rev[:12])
		cmd := "true"
		if !pass {
			cmd = "false"
		}
		out, errOut, code := e.run(work, "ci", nil, "check", "run", "--pr", id, "--rev", rev, "--name", "ci", "--", cmd)
		if (code == 0) != pass {
			t.Fatalf("check run %s: exit %d\n%s%s", cmd, code, out, errOut)
		}
	}
	refused := func(what, step, code, naming string) {
		t.Helper()
		_, err := fixtures.GitErr(t, work, nil, "push", "origin", step+":refs/heads/main")
		if err == nil || !strings.Contains(err.Error(), "["+code+"]") || !strings.Contains(err.Error(), naming) {
			t.Errorf("%s: %v, want [%s] naming %q", what, err, code, naming)
		}
		if now := tip(); now != old {
			t.Fatalf("%s moved main to %s", what, now)
		}
	}
	base := gitOut("rev-list", "--max-parents=0", "origin/main")
	headOf := func(br string) string { return gitOut("rev-parse", "origin/"+br) }
	// A partition step whose inputs differ from its tested candidate's: a
	// web pull request branched from the first commit, its candidate
	// tested there, whose web/ the lanes have changed since.
	web := openFrom(base, "late-web", map[string]string{"web/late.js": "late\n"})
	fixtures.Git(t, work, "fetch", "-q", "origin")
	cWeb := commit(base, headOf("late-web"), "Merge pull request "+web+" into main")
	check(web, cWeb, true)
	step := func(head, tested string) string {
		return commit(old, head, "Merge\n\n"+queue.TrailerTested+": "+tested)
	}
	refused("a partition step tested on other web/ content", step(headOf("late-web"), cWeb), "partition-untested", "web/")
	// A pull request of lane web that also changes api/.
	both := openFrom(base, "web-api", map[string]string{"web/both.js": "b\n", "api/both.go": "b\n"})
	fixtures.Git(t, work, "fetch", "-q", "origin")
	cBoth := commit(old, headOf("web-api"), "m")
	check(both, cBoth, true)
	tipParent := gitOut("rev-parse", old+"^1")
	cBothOld := commit(base, headOf("web-api"), "m")
	check(both, cBothOld, true)
	refused("a web pull request changing api/", step(headOf("web-api"), cBothOld), "partition-outside", "api/both.go")
	// A Git-Plus-Tested naming another pull request's candidate, or a red
	// one.
	refused("another pull request's candidate", step(headOf("late-web"), cBoth), "tested-candidate", "merges")
	other := commit(tipParent, headOf("late-web"), "m2")
	check(web, other, false)
	refused("a red candidate", step(headOf("late-web"), other), "checks-failed", "tested candidate")
	// A lane candidate landed after another landing changed one of its
	// reads: web's candidate on the tip, green; then package.json (web
	// reads it; global) lands directly; its step on the new tip is refused.
	web2 := openPR("web-two", map[string]string{"web/two.js": "2\n"})
	fixtures.Git(t, work, "fetch", "-q", "origin")
	cWeb2 := commit(old, headOf("web-two"), "m")
	check(web2, cWeb2, true)
	pkg := openPR("pkg", map[string]string{"package.json": "{\"v\": 2}\n"})
	fixtures.Git(t, work, "fetch", "-q", "origin")
	check(pkg, headOf("pkg"), true)
	e.ok(work, "dev", "pr", "merge", pkg)
	old = tip()
	fixtures.Git(t, work, "fetch", "-q", "origin")
	refused("a web step after package.json changed", commit(old, headOf("web-two"), "Merge\n\n"+queue.TrailerTested+": "+cWeb2), "partition-untested", "package.json")
	if t.Failed() {
		t.Log(logs())
	}
}
