package checkrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gitplus/gitplus/receive/gitio"
)

// What a check command learns of the lane it checks (docs/queue.md,
// "Partitions and lanes"): when the queue published the revision as a step
// of a partition's lane (its latest queue.candidate names a partition),
// the command runs with
//
//	GITPLUS_CHECK_PARTITION  the partition's name
//	GITPLUS_CHECK_PATHS      a file listing the files the step changes
//	                         against its first parent, each ended by a NUL
//	                         byte (as `git diff-tree -r --name-only -z`
//	                         writes them: a path may hold a line break)
//
// so it may run the partition's checks only. Neither is set for any other
// revision (a global pull request's step, a head, a branch without
// partitions): the command then checks everything. The file is written
// into the run's own directory, outside the checkout, readable by the
// sandboxed command (docs/ci.md), and removed with the run. This is the one place the
// command's environment gains anything from the queue's records.
//
// EnvPartition and EnvPaths name the variables.
const (
	EnvPartition = "GITPLUS_CHECK_PARTITION"
	EnvPaths     = "GITPLUS_CHECK_PATHS"
)

// lane is what a lane's step tells its command: the partition's name and
// the files the step changes, NUL-terminated; and the queue's target, whose
// rules hold the partition (confine.go).
type lane struct {
	name   string
	paths  []byte
	target string
}

// laneOf returns the lane of the revision rev, which recs
// (candidateRecords) name; nil when the revision is no lane's step.
func laneOf(gitDir string, recs []queueRecord, rev string) (*lane, error) {
	for _, r := range recs {
		if r.rec.Partition == "" || len(r.rec.Parents) == 0 {
			continue
		}
		out, _, err := gitio.RunGit(context.Background(), "", nil, "--git-dir="+gitDir, "diff-tree", "-r", "--name-only", "-z", "--no-renames", "--no-commit-id", r.rec.Parents[0], rev)
		if err != nil {
			return nil, fmt.Errorf("listing the files %s changes against %s: %w", rev, r.rec.Parents[0], err)
		}
		target := ""
		if r.q != nil {
			target = r.q.Target
		}
		return &lane{name: r.rec.Partition, paths: out, target: target}, nil
	}
	return nil, nil
}

// write puts the paths file into dir (the run's own directory, removed
// with it) and returns the variables above and the file.
func (l *lane) write(dir string) ([]string, string, error) {
	file := filepath.Join(dir, "changed-paths")
	if err := os.WriteFile(file, l.paths, 0o644); err != nil {
		return nil, "", err
	}
	return []string{EnvPartition + "=" + l.name, EnvPaths + "=" + file}, file, nil
}
