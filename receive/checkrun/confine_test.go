package checkrun

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/sandbox"
)

// cover grants the fewest paths that hold every input file of the tree
// and nothing else of it: whole directories where every file is an input,
// single files elsewhere, never a symbolic link.
func TestCover(t *testing.T) {
	tree := func(paths ...string) []treeFile {
		var out []treeFile
		for _, p := range paths {
			f := treeFile{path: p}
			if strings.HasSuffix(p, "@") {
				f = treeFile{path: strings.TrimSuffix(p, "@"), link: true}
			}
			out = append(out, f)
		}
		return out
	}
	monorepo := tree("web/a.js", "web/src/b.js", "web/src/c.css", "api/main.go", "api/x", "package.json", "go.mod", "README.md", "ci.sh",
		"ui-kit/button.js", "ui-kit/theme/dark.css", "docs/web/guide.md", "web/link@", "lib/one.js", "lib/two.go")
	for _, tc := range []struct {
		name         string
		paths, reads []string
		files        []treeFile
		want         []string
	}{
		{"a directory and a root file", []string{"web/**"}, []string{"package.json"}, monorepo,
			[]string{"package.json", "web"}},
		{"several directories", []string{"web/**"}, []string{"package.json", "ui-kit/**"}, monorepo,
			[]string{"package.json", "ui-kit", "web"}},
		{"part of a directory", []string{"api/**"}, []string{"web/src/*.js", "go.mod"}, monorepo,
			[]string{"api", "go.mod", "web/src/b.js"}},
		{"an unanchored name at any depth", []string{"docs/**"}, []string{"*.js"}, monorepo,
			[]string{"docs", "lib/one.js", "ui-kit/button.js", "web/a.js", "web/src/b.js"}},
		{"a directory pattern covers its subtree", []string{"ui-kit/"}, nil, monorepo,
			[]string{"ui-kit"}},
		{"a symbolic link is never granted", []string{"web/link"}, []string{"api/x"}, monorepo,
			[]string{"api/x"}},
		{"the whole tree", []string{"**"}, nil, monorepo, []string{"."}},
		{"nothing matches", []string{"nothing/**"}, nil, monorepo, nil},
		{"an empty tree", []string{"web/**"}, nil, nil, []string{"."}},
	} {
		x, err := trust.NewPartition("p", tc.paths, tc.reads)
		if err != nil {
			t.Fatal(err)
		}
		if got := cover(tc.files, x.Input); !slices.Equal(got, tc.want) {
			t.Errorf("%s: cover %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestConfineReads (docs/ci.md, "Confining reads to a partition"), under
// the real kernel's Landlock: a lane candidate of partition web whose
// check reads web's inputs passes; one that reads api/x (no input of web)
// fails with "Permission denied" and the line saying why; the same run
// without --confine-reads passes, as does the run of a revision that is no
// lane's candidate. Under confinement the checkout has no .git, the rest of
// the checkout is written but not read back, a symbolic link or a rename
// does not reach an undeclared file, and the run says "+reads".
func TestConfineReads(t *testing.T) {
	abi, why := sandbox.ABI()
	if abi == 0 {
		t.Skipf("this kernel has no Landlock (%s)", why)
	}
	work := t.TempDir()
	for name, content := range map[string]string{"web/index.js": "web\n", "web/src/app.js": "app\n", "api/x": "api\n",
		"package.json": "{}\n", "README.md": "monorepo\n"} {
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../api/x", filepath.Join(work, "web", "link")); err != nil {
		t.Fatal(err)
	}
	fixtures.Git(t, work, "init", "-q")
	fixtures.Git(t, work, "add", ".")
	fixtures.Git(t, work, "commit", "-q", "-m", "base")
	rev := strings.TrimSpace(fixtures.Git(t, work, "rev-parse", "HEAD"))
	gitDir := filepath.Join(work, ".git")

	web, err := trust.NewPartition("web", []string{"web/**"}, []string{"package.json"})
	if err != nil {
		t.Fatal(err)
	}
	api, _ := trust.NewPartition("api", []string{"api/**"}, nil)
	rules := trust.Rules{Protected: map[string]trust.Branch{"refs/heads/main": {Partitions: []trust.Partition{web, api}}}}
	box := &confined{conf: sandbox.Confinement{ABI: abi}, environ: os.Environ()}
	// run runs script on rev as lane l's candidate (nil: no lane's),
	// with --confine-reads or not.
	run := func(l *lane, confine bool, script string) (string, string) {
		t.Helper()
		var out bytes.Buffer
		o := Options{Rev: rev, Name: "ci", Argv: []string{"sh", "-c", script}, Stdout: &out, Stderr: &out, Log: &out,
			Sandbox: Sandbox{ConfineReads: confine}, lane: l}
		if confine {
			o.reads, _ = confineTo(rules, l)
		}
		how := record(box.conf, o.reads)
		concl, err := runOnce(gitDir, o, box, checkVars(o, "", 1, how))
		if err != nil {
			t.Fatal(err)
		}
		return concl, out.String()
	}
	webLane := &lane{name: "web", target: "refs/heads/main"}
	const readsInputs = `cat web/index.js web/src/app.js package.json >/dev/null && echo "sandbox: $GITPLUS_CHECK_SANDBOX"`
	const readsAPI = `cat web/index.js api/x`

	if concl, out := run(webLane, true, readsInputs); concl != pr.Success || !strings.Contains(out, "sandbox: landlock-") || !strings.Contains(out, pr.ReadsSuffix) {
		t.Errorf("web reading its inputs under --confine-reads: %s\n%s", concl, out)
	}
	concl, out := run(webLane, true, readsAPI)
	if concl != pr.Failure || !strings.Contains(out, "api/x: Permission denied") ||
		!strings.Contains(out, "reads confined to partition web's inputs: web/**, package.json") {
		t.Errorf("web reading api/x under --confine-reads: %s, want failure with the refused read and why\n%s", concl, out)
	}
	if concl, out := run(webLane, false, readsAPI); concl != pr.Success {
		t.Errorf("web reading api/x without --confine-reads: %s\n%s", concl, out)
	}
	if concl, out := run(nil, true, readsAPI); concl != pr.Success {
		t.Errorf("no lane's candidate reading api/x under --confine-reads: %s\n%s", concl, out)
	}
	if concl, out := run(&lane{name: "gone", target: "refs/heads/main"}, true, readsAPI); concl != pr.Success {
		t.Errorf("a lane whose partition is gone from the rules, reading api/x: %s\n%s", concl, out)
	}

	// What else is and is not possible under confinement.
	const probes = `
try() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "$name: ok"; else echo "$name: denied"; fi; }
try dot-git test -e .git
try git-log git log -1
try list-root ls .
try list-web ls web
try read-readme cat README.md
try read-link cat web/link
try write-build sh -c 'mkdir -p build && echo out >build/out'
try read-build cat build/out
try write-web sh -c 'echo out >web/out && cat web/out'
try rename-into-web mv api/x web/x
try link-into-web ln api/x web/hard
try read-moved cat web/x
try scratch sh -c 'echo s >"$TMPDIR/s" && cat "$TMPDIR/s"'
`
	_, out = run(webLane, true, probes)
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			got[k] = v
		}
	}
	want := map[string]string{"dot-git": "denied", "git-log": "denied", "list-root": "denied", "list-web": "ok", "read-readme": "denied",
		"read-link": "denied", "write-build": "ok", "read-build": "denied", "write-web": "ok", "rename-into-web": "denied",
		"link-into-web": "denied", "read-moved": "denied", "scratch": "ok"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// --confine-reads is refused where the kernel cannot honour it, and said
// in the line that says how commands run.
func TestConfineReadsDecide(t *testing.T) {
	sb := Sandbox{ConfineReads: true}
	if err := sb.canConfine(sandbox.Confinement{Why: "no Landlock here"}); !errors.Is(err, sandbox.ErrUnconfinable) ||
		!strings.Contains(err.Error(), "--confine-reads") || !strings.Contains(err.Error(), "no Landlock here") {
		t.Errorf("--confine-reads without Landlock: %v", err)
	}
	if err := sb.canConfine(sandbox.Confinement{Off: true}); !errors.Is(err, ErrConfineReads) || !strings.Contains(err.Error(), "--sandbox off") {
		t.Errorf("--confine-reads with --sandbox off: %v", err)
	}
	if err := (Sandbox{}).canConfine(sandbox.Confinement{}); err != nil {
		t.Errorf("no --confine-reads, env-only: %v", err)
	}
	c := sandbox.Confinement{ABI: 7}
	if err := sb.canConfine(c); err != nil || !strings.Contains(sb.Describe(c), "recorded landlock-7+reads") {
		t.Errorf("--confine-reads with Landlock: %v %q", err, sb.Describe(c))
	}
	if strings.Contains((Sandbox{}).Describe(c), "confine-reads") {
		t.Errorf("the line without --confine-reads: %q", (Sandbox{}).Describe(c))
	}
}
