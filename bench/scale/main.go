// Command scale adds N approved pull requests, all entered in one queue, to a
// repository `git+ init` made, quickly: commits through `git fast-import`,
// heads kept under refs/scale/, events signed in process and written as loose objects, refs in one
// `git update-ref --stdin`, then `git repack -ad` and `git pack-refs --all`
// as a server's housekeeping would leave them. It bypasses the hooks (the
// events are the ones the CLI would write); bench/scale.sh then times the
// CLI against `git for-each-ref refs/hub` on the result.
//
//	go run ./bench/scale -repo DIR -n 1000 -dev KEY -rev KEY -q KEY
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/google/uuid"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
)

func main() {
	repo := flag.String("repo", "", "bare repository made by git+ init, with members, rules and an open queue on -target")
	n := flag.Int("n", 1000, "pull requests to add")
	target := flag.String("target", "refs/heads/main", "the queue's target and every pull request's base")
	devKey := flag.String("dev", "", "key file of a member with hub.pr")
	revKey := flag.String("rev", "", "key file of a member with hub.review")
	qKey := flag.String("q", "", "key file of a member with hub.queue")
	flag.Parse()
	if err := run(*repo, *n, *target, *devKey, *revKey, *qKey); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func git(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir=" + dir}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

func run(repo string, n int, target, devKey, revKey, qKey string) error {
	if repo == "" || devKey == "" || revKey == "" || qKey == "" {
		return fmt.Errorf("-repo, -dev, -rev and -q are required")
	}
	dev, err := sshsign.LoadKeyFile(devKey)
	if err != nil {
		return err
	}
	rev, err := sshsign.LoadKeyFile(revKey)
	if err != nil {
		return err
	}
	q, err := sshsign.LoadKeyFile(qKey)
	if err != nil {
		return err
	}
	mainTip, err := git(repo, nil, "rev-parse", target)
	if err != nil {
		return err
	}
	// The repository id and the open queue on target.
	st := filesystem.NewStorageWithOptions(osfs.New(repo), cache.NewObjectLRUDefault(), filesystem.Options{})
	trustRef, err := st.Reference(hubrefs.TrustRef)
	if err != nil {
		return fmt.Errorf("%s: %w", hubrefs.TrustRef, err)
	}
	tevs, err := hubrefs.ReadLog(st, trustRef.Hash(), hubrefs.Ceilings{})
	if err != nil {
		return err
	}
	repoID := tevs[0].Repo
	qrefs, err := git(repo, nil, "for-each-ref", "--format=%(refname) %(objectname)", hubrefs.QueueRefPrefix)
	if err != nil {
		return err
	}
	var qRef string
	var qTip plumbing.Hash
	for _, line := range strings.Split(qrefs, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			qRef, qTip = f[0], plumbing.NewHash(f[1])
		}
	}
	if qRef == "" {
		return fmt.Errorf("%s has no queue: run `git+ queue open --target %s` first", repo, target)
	}

	// Commits: one per pull request, each adding its own file on target.
	var fi bytes.Buffer
	for i := 1; i <= n; i++ {
		body := fmt.Sprintf("pull request %d\n", i)
		fmt.Fprintf(&fi, "blob\nmark :%d\ndata %d\n%s\n", 2*i, len(body), body)
		msg := fmt.Sprintf("feature %d", i)
		fmt.Fprintf(&fi, "commit refs/scale/%d\nmark :%d\ncommitter Dev <dev@example.invalid> %d +0000\ndata %d\n%s\nfrom %s\nM 100644 :%d scale/f%05d.txt\n\n",
			i, 2*i+1, 1700000000+i, len(msg), msg, mainTip, 2*i, i)
	}
	marks := filepath.Join(repo, "scale-marks")
	if _, err := git(repo, fi.Bytes(), "fast-import", "--quiet", "--export-marks="+marks); err != nil {
		return err
	}
	mb, err := os.ReadFile(marks)
	if err != nil {
		return err
	}
	os.Remove(marks)
	heads := map[int]string{}
	for _, line := range strings.Split(string(mb), "\n") {
		var m int
		var h string
		if _, err := fmt.Sscanf(line, ":%d %s", &m, &h); err == nil && m%2 == 1 {
			heads[(m-1)/2] = h
		}
	}
	if len(heads) != n {
		return fmt.Errorf("fast-import marked %d commits, want %d", len(heads), n)
	}

	// Events: opened by dev, approved by rev, entered by q.
	when := time.Now().Add(-time.Duration(3*n+10) * time.Second)
	tick := func() time.Time { when = when.Add(time.Second); return when }
	base := func(typ string) hubrefs.Base { return hubrefs.Base{Type: typ, Repo: repoID} }
	var upd bytes.Buffer
	ids := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		u, err := uuid.NewV7()
		if err != nil {
			return err
		}
		id, head := u.String(), heads[i]
		tip, err := hubrefs.WriteEvent(st, hubrefs.PROpened{Base: base(hubrefs.TypePROpened), ID: id, BaseRef: target, Head: head,
			Title: fmt.Sprintf("feature %d", i)}, nil, "dev", tick(), dev)
		if err != nil {
			return err
		}
		tip, err = hubrefs.WriteEvent(st, hubrefs.Review{Base: base(hubrefs.TypeReviewSubmit), Head: head, BaseRef: target,
			Verdict: pr.Approve}, []plumbing.Hash{tip}, "rev", tick(), rev)
		if err != nil {
			return err
		}
		fmt.Fprintf(&upd, "update %s%s %s\n", hubrefs.PRRefPrefix, id, tip)
		ids = append(ids, id)
		qTip, err = hubrefs.WriteEvent(st, hubrefs.QueueEntered{Base: base(hubrefs.TypeQueueEntered), PR: id, Head: head, BaseRef: target},
			[]plumbing.Hash{qTip}, "q", tick(), q)
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(&upd, "update %s %s\n", qRef, qTip)
	if _, err := git(repo, upd.Bytes(), "update-ref", "--stdin"); err != nil {
		return err
	}
	if _, err := git(repo, nil, "repack", "-adq"); err != nil {
		return err
	}
	if _, err := git(repo, nil, "pack-refs", "--all"); err != nil {
		return err
	}
	sort.Strings(ids)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "added %d pull requests to %s (queue %s at %s)\n", n, repo, qRef, qTip)
	return nil
}
