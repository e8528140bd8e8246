package main

// Recording a check with curl and ssh-keygen alone against git+ serve
// (docs/serving.md "Recording a check without git+").

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

// recordCheckScript is the loop docs/serving.md documents: prepare, sign,
// append, and on 409 sign the fresh event it answered.
const recordCheckScript = `set -eu
url=$1 pr=$2 name=$3 head=$4 conclusion=$5 member=$6 key=$7
printf '{"pr":"%s","name":"%s","head":"%s","conclusion":"%s","member":"%s"}' \
  "$pr" "$name" "$head" "$conclusion" "$member" >req.json
curl -fsS -H 'Content-Type: application/json' --data-binary @req.json "$url/hub/checks/prepare" -o event
i=0
while :; do
  rm -f event.sig
  ssh-keygen -q -Y sign -n git -f "$key" event
  code=$(curl -sS -o answer -w '%{http_code}' -F pr="$pr" -F event=@event -F signature=@event.sig "$url/hub/checks/append")
  case $code in
  200) cat answer; exit 0 ;;
  409) i=$((i+1)); [ "$i" -lt 5 ] || { echo "the pull request kept moving" >&2; exit 1; }; mv answer event ;;
  *) echo "HTTP $code" >&2; cat answer >&2; exit 1 ;;
  esac
done
`

func TestServeRecordCheckWithCurl(t *testing.T) {
	t.Parallel()
	curl, err1 := exec.LookPath("curl")
	keygen, err2 := exec.LookPath("ssh-keygen")
	if err1 != nil || err2 != nil {
		t.Skip("SKIP: curl or ssh-keygen is not installed")
	}
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	url := s.URL + "/origin.git"

	// The job's world: sh, curl, ssh-keygen and a few file tools; no git,
	// no git+, no clone.
	binDir := t.TempDir()
	for _, tool := range []string{"curl", "ssh-keygen", "rm", "mv", "cat"} {
		path := map[string]string{"curl": curl, "ssh-keygen": keygen}[tool]
		if path == "" {
			var err error
			if path, err = exec.LookPath(tool); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(path, filepath.Join(binDir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	job := func(conclusion, member string) (string, error) {
		t.Helper()
		cmd := exec.Command(sh, "-c", recordCheckScript, "record", url, p.ID, "ci", h, conclusion, member, w.keys[member].Path)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + binDir, "HOME=" + cmd.Dir}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	before := w.ref(p.Ref())
	out, err := job("success", "ci")
	if err != nil {
		t.Fatalf("recording a check with curl and ssh-keygen: %v\n%s", err, out)
	}
	id := w.ref(p.Ref())
	if !strings.Contains(out, `"id":"`+id+`"`) {
		t.Fatalf("the answer %q does not name the new tip %s", out, id)
	}
	if got := prChecks(t, w, p.Ref()); strings.Join(got, "|") != "check.completed success" {
		t.Fatalf("checks on the pull request: %q", got)
	}
	// git verifies the commit as the member's signature.
	signers := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(signers, []byte("ci@hub.invalid namespaces=\"git\" "+w.keys["ci"].Authorized+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o, e, err := w.gitRun(w.origin, "", nil, "-c", "gpg.ssh.allowedSignersFile="+signers, "verify-commit", id); err != nil {
		t.Fatalf("git verify-commit %s: %v\n%s%s", id, err, o, e)
	}
	// git+ verify judges the update as the hook did, in a copy of the
	// repository where the pull request is still at its old tip.
	cp := filepath.Join(t.TempDir(), "copy.git")
	w.git(w.work, "clone", "-q", "--mirror", w.origin, cp)
	w.git(cp, "update-ref", p.Ref(), before)
	if o, e, code := w.gp("", cp, "", "verify", "--ref", p.Ref(), "--old", before, "--new", id); code != 0 {
		t.Fatalf("git+ verify of the appended check: exit %d\n%s%s", code, o, e)
	}

	// A key without hub.check:ci: the hook's refusal comes back with its code.
	out, err = job("failure", "dev")
	if err == nil || !strings.Contains(out, "HTTP 403") || !strings.Contains(out, "git+: refused "+p.Ref()+": [") {
		t.Fatalf("a check signed by dev: %v\n%s", err, out)
	}
	if got := w.ref(p.Ref()); got != id {
		t.Fatalf("a refused check moved %s to %s", p.Ref(), got)
	}

	// A race: the pull request moves between prepare and append. append
	// answers 409 with the event laid out on the new tip; signed again, it
	// lands on top of the other writer's event.
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		o, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, o)
		}
		return string(o)
	}
	if err := os.WriteFile(filepath.Join(dir, "req.json"), []byte(`{"pr":"`+p.ID+`","name":"ci","head":"`+h+`","conclusion":"success","member":"ci"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run(curl, "-fsS", "--data-binary", "@req.json", url+"/hub/checks/prepare", "-o", "event")
	run(keygen, "-q", "-Y", "sign", "-n", "git", "-f", w.keys["ci"].Path, "event")
	w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
	other := w.writeEvent("ci", hubrefs.Check{Base: w.base(hubrefs.TypeCheckStarted), Name: "ci", Head: h}, id)
	if o, err := w.push("origin", other+":"+p.Ref()); err != nil {
		t.Fatalf("push check.started: %v\n%s", err, o)
	}
	code := run(curl, "-sS", "-o", "answer", "-w", "%{http_code}", "-F", "pr="+p.ID, "-F", "event=@event", "-F", "signature=@event.sig", url+"/hub/checks/append")
	if code != "409" {
		t.Fatalf("append after the ref moved: HTTP %s\n%s", code, readFile(filepath.Join(dir, "answer")))
	}
	if fresh := readFile(filepath.Join(dir, "answer")); !strings.Contains(fresh, "\nparent "+other+"\n") {
		t.Fatalf("the 409 answer is not the event on the new tip %s:\n%s", other, fresh)
	}
	run("mv", "answer", "event")
	run("rm", "-f", "event.sig")
	run(keygen, "-q", "-Y", "sign", "-n", "git", "-f", w.keys["ci"].Path, "event")
	if code := run(curl, "-sS", "-o", "answer", "-w", "%{http_code}", "-F", "pr="+p.ID, "-F", "event=@event", "-F", "signature=@event.sig", url+"/hub/checks/append"); code != "200" {
		t.Fatalf("append of the re-signed event: HTTP %s\n%s", code, readFile(filepath.Join(dir, "answer")))
	}
	if got := prChecks(t, w, p.Ref()); strings.Join(got, "|") != "check.completed success|check.started|check.completed success" {
		t.Fatalf("checks after the race: %q", got)
	}
}
