package main

// git+ webhook {deliveries,redeliver}, git+ mirror {status,sync} and
// git+ hook deliver: the after-push delivery spool seen and driven by hand
// (docs/delivery.md).
//
// Decisions:
//   - The verbs work on the git directory given by --repo (or the current
//     one): the repository whose post-receive spools, normally the bare one
//     on the server.
//   - A configuration file that does not load is shown first (text) or as
//     "config_errors" (JSON) with its file, line and column, and the verb
//     exits 1 after printing what it could read.
//   - `mirror sync` syncs in this process, holding the mirror's sync lock
//     (so it never overlaps the worker's sync of the same mirror), and
//     exits 1 when any mirror fails. `webhook redeliver` sends once, now,
//     and exits 1 unless the receiver answers 2xx.
//   - `hook deliver` is the worker post-receive starts; running it by hand
//     settles whatever is pending (it returns at once if a worker runs).
//   - Verbs that push (queue run, pr merge) wait for their own deliveries at
//     their end (awaitOwnDeliveries), bounded by $GITPLUS_DELIVERY_WAIT (a
//     Go duration; default hooks.DefaultAwait), only when the repository
//     they pushed to is on this machine; they report what did not arrive
//     and do not fail for it.

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/hooks/webhookpost"
)

func init() {
	register(&cli.Command{
		Name:  "webhook",
		Usage: "see and resend the webhook deliveries the after-push chain spooled",
		Subcommands: []*cli.Command{
			{
				Name:   "deliveries",
				Usage:  "list every delivery: hook, state, attempts, last status and error",
				Flags:  []cli.Flag{jsonFlag()},
				Action: webhookDeliveriesAction,
			},
			{
				Name:      "redeliver",
				Usage:     "send one delivery again, now",
				ArgsUsage: "ID",
				Action:    webhookRedeliverAction,
			},
		},
	}, &cli.Command{
		Name:  "mirror",
		Usage: "see and drive the mirrors of remotes.json",
		Subcommands: []*cli.Command{
			{
				Name:   "status",
				Usage:  "each mirror's last success, last error and whether it is behind",
				Flags:  []cli.Flag{jsonFlag()},
				Action: mirrorStatusAction,
			},
			{
				Name:      "sync",
				Usage:     "push everything to every mirror (or NAME) now",
				ArgsUsage: "[NAME]",
				Action:    mirrorSyncAction,
			},
		},
	})
}

func hookDeliverCommand() *cli.Command {
	return &cli.Command{
		Name:  "deliver",
		Usage: "the delivery worker (started by post-receive): settle every spooled webhook delivery and mirror change, then exit",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "repo", Usage: "git directory of the repository (default: the global --repo, $GIT_DIR, the current directory)"},
		},
		Action: hookDeliverAction,
	}
}

func deliveryGitDir(c *cli.Context) (string, error) {
	gitDir, _, err := findGitDir(rootString(c, "repo"))
	return gitDir, err
}

func hookDeliverAction(c *cli.Context) error {
	gitDir := c.String("repo")
	if gitDir == "" {
		gitDir = hookGitDir(c)
	}
	if abs, err := filepath.Abs(gitDir); err == nil {
		gitDir = abs
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	w := &hooks.Worker{GitDir: gitDir, Environ: os.Environ(), Log: c.App.ErrWriter, Send: webhookpost.Attempt}
	if err := w.Run(ctx); err != nil && ctx.Err() == nil {
		return fail(1, fmt.Errorf("delivery worker for %s: %w", gitDir, err))
	}
	return nil
}

type deliveryView struct {
	ID          string              `json:"id"`
	Hook        string              `json:"hook"`
	URL         string              `json:"url"`
	State       string              `json:"state"`
	Attempts    int                 `json:"attempts"`
	LastStatus  string              `json:"last_status"`
	LastError   string              `json:"last_error"`
	Created     time.Time           `json:"created"`
	LastAttempt *time.Time          `json:"last_attempt"`
	NextAttempt *time.Time          `json:"next_attempt"`
	Settled     *time.Time          `json:"settled"`
	Updates     []hooks.DeliveryRef `json:"updates"`
}

func configErrors(errs ...error) []string {
	out := []string{}
	for _, e := range errs {
		if e != nil {
			out = append(out, e.Error())
		}
	}
	return out
}

func webhookDeliveriesAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ webhook deliveries [--json]")
	}
	gitDir, err := deliveryGitDir(c)
	if err != nil {
		return fail(1, err)
	}
	_, herr := hooks.LoadWebhooks(gitDir)
	cfg := configErrors(herr)
	jobs, rerrs := hooks.Deliveries(gitDir)
	cfg = append(cfg, configErrors(rerrs...)...)
	views := []deliveryView{}
	for _, j := range jobs {
		v := deliveryView{ID: j.ID, Hook: j.Hook, URL: j.URL, State: j.State, Attempts: j.Attempts, LastStatus: j.LastStatus,
			LastError: j.LastError, Created: j.Created, LastAttempt: j.LastAttempt, Settled: j.Settled, Updates: j.Updates}
		if j.State == hooks.StatePending {
			t := j.NextAttempt
			v.NextAttempt = &t
		}
		views = append(views, v)
	}
	if wantJSON(c) {
		if err := printJSON(c, map[string]any{"config_errors": cfg, "deliveries": views}); err != nil {
			return err
		}
	} else {
		out := c.App.Writer
		for _, e := range cfg {
			fmt.Fprintf(out, "config error: %s\n", e)
		}
		if len(views) == 0 {
			fmt.Fprintf(out, "no webhook deliveries recorded in %s\n", gitDir)
		}
		for _, v := range views {
			refs := make([]string, 0, len(v.Updates))
			for _, u := range v.Updates {
				refs = append(refs, u.Ref)
			}
			fmt.Fprintf(out, "%s %s %s attempts=%d", v.ID, v.Hook, v.State, v.Attempts)
			if v.LastStatus != "" {
				fmt.Fprintf(out, " status=%q", v.LastStatus)
			}
			if v.LastError != "" {
				fmt.Fprintf(out, " error=%q", v.LastError)
			}
			if v.NextAttempt != nil && v.Attempts > 0 {
				fmt.Fprintf(out, " next=%s", v.NextAttempt.UTC().Format(time.RFC3339))
			}
			fmt.Fprintf(out, " refs=%s\n", strings.Join(refs, ","))
		}
	}
	if len(cfg) > 0 {
		return fail(1, fmt.Errorf("the webhook configuration or spool of %s has errors (listed above)", gitDir))
	}
	return nil
}

func webhookRedeliverAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr("usage: git+ webhook redeliver ID")
	}
	gitDir, err := deliveryGitDir(c)
	if err != nil {
		return fail(1, err)
	}
	j, err := hooks.Redeliver(context.Background(), gitDir, c.Args().First(), webhookpost.Attempt)
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.Writer, "delivered %s to %s (%s, attempt %d)\n", j.ID, j.Hook, j.LastStatus, j.Attempts)
	return nil
}

type mirrorView struct {
	Name          string     `json:"name"`
	URL           string     `json:"url"`
	Behind        bool       `json:"behind"`
	LastSuccess   *time.Time `json:"last_success"`
	LastError     string     `json:"last_error"`
	LastErrorTime *time.Time `json:"last_error_time"`
	Failures      int        `json:"failures"`
	Requested     int64      `json:"changes_recorded"`
	Synced        int64      `json:"changes_synced"`
	NextAttempt   *time.Time `json:"next_attempt"`
}

func mirrorStatusAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ mirror status [--json]")
	}
	gitDir, err := deliveryGitDir(c)
	if err != nil {
		return fail(1, err)
	}
	remotes, rerr := hooks.LoadRemotes(gitDir)
	cfg := configErrors(rerr)
	views := []mirrorView{}
	for _, r := range remotes {
		st, err := hooks.ReadMirror(gitDir, r)
		if err != nil {
			cfg = append(cfg, err.Error())
		}
		v := mirrorView{Name: r.Name, URL: r.URL, Behind: st.Behind(), LastSuccess: st.LastSuccess, LastError: st.LastError,
			LastErrorTime: st.LastErrorTime, Failures: st.Failures, Requested: st.Requested, Synced: st.Synced}
		if st.Behind() {
			t := st.NextAttempt
			v.NextAttempt = &t
		}
		views = append(views, v)
	}
	worker := hooks.WorkerRunning(gitDir)
	if wantJSON(c) {
		if err := printJSON(c, map[string]any{"config_errors": cfg, "worker_running": worker, "mirrors": views}); err != nil {
			return err
		}
	} else {
		out := c.App.Writer
		for _, e := range cfg {
			fmt.Fprintf(out, "config error: %s\n", e)
		}
		if len(views) == 0 && rerr == nil {
			fmt.Fprintf(out, "no mirrors in %s\n", filepath.Join(gitDir, hooks.RemotesFile))
		}
		for _, v := range views {
			state := "in step"
			if v.Behind {
				state = fmt.Sprintf("behind (%d changes not synced)", v.Requested-v.Synced)
			}
			fmt.Fprintf(out, "%s %s: %s", v.Name, v.URL, state)
			if v.LastSuccess != nil {
				fmt.Fprintf(out, "; last success %s", v.LastSuccess.UTC().Format(time.RFC3339))
			}
			if v.LastError != "" {
				fmt.Fprintf(out, "; last error %s: %s", v.LastErrorTime.UTC().Format(time.RFC3339), v.LastError)
			}
			fmt.Fprintln(out)
		}
	}
	if len(cfg) > 0 {
		return fail(1, fmt.Errorf("the mirror configuration of %s has errors (listed above)", gitDir))
	}
	return nil
}

func mirrorSyncAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErr("usage: git+ mirror sync [NAME]")
	}
	gitDir, err := deliveryGitDir(c)
	if err != nil {
		return fail(1, err)
	}
	remotes, err := hooks.LoadRemotes(gitDir)
	if err != nil {
		return fail(1, err)
	}
	name := c.Args().First()
	var picked []hooks.Remote
	var names []string
	for _, r := range remotes {
		names = append(names, r.Name)
		if name == "" || r.Name == name {
			picked = append(picked, r)
		}
	}
	if len(picked) == 0 {
		if name != "" {
			return fail(1, fmt.Errorf("no mirror %q in %s (mirrors: %s)", name, filepath.Join(gitDir, hooks.RemotesFile), strings.Join(names, ", ")))
		}
		fmt.Fprintf(c.App.Writer, "no mirrors in %s: nothing to do\n", filepath.Join(gitDir, hooks.RemotesFile))
		return nil
	}
	failed := 0
	for _, r := range picked {
		if _, err := hooks.SyncMirror(context.Background(), gitDir, r, os.Environ(), true); err != nil {
			failed++
			fmt.Fprintf(c.App.ErrWriter, "git+: %v\n", err)
			continue
		}
		fmt.Fprintf(c.App.Writer, "synced %s (%s)\n", r.Name, r.URL)
	}
	if failed > 0 {
		return fail(1, fmt.Errorf("%d of %d mirrors failed to sync (see `git+ mirror status`)", failed, len(picked)))
	}
	return nil
}

// awaitOwnDeliveries waits, bounded, for the deliveries of the pushes a
// verb made to h since it started, when the repository it pushed to is on
// this machine, and returns what did not arrive, one line each.
func awaitOwnDeliveries(h *hubRepo, since time.Time) []string {
	dir := localPushTarget(h)
	if dir == "" {
		return nil
	}
	bound := hooks.DefaultAwait
	if v := os.Getenv("GITPLUS_DELIVERY_WAIT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			bound = d
		}
	}
	bin, _ := hooks.Executable()
	var out []string
	for _, u := range hooks.AwaitDeliveries(context.Background(), dir, hooks.AwaitSpec{Since: since, Binary: bin, Environ: os.Environ()}, bound) {
		out = append(out, u.String())
	}
	return out
}

// localPushTarget is the git directory h's pushes land in when it is on
// this machine ("" otherwise).
func localPushTarget(h *hubRepo) string {
	if h.Remote == "." {
		return h.GitDir
	}
	u := h.Remote
	if v, err := gitOut(h.GitDir, "config", "--get", "remote."+h.Remote+".url"); err == nil && v != "" {
		u = v
	}
	u = strings.TrimPrefix(u, "file://")
	if strings.Contains(u, "://") {
		return ""
	}
	if !filepath.IsAbs(u) {
		if strings.Contains(u, ":") {
			return "" // scp-like host:path
		}
		u = filepath.Join(h.GitDir, u)
	}
	if dir, _, err := findGitDir(u); err == nil {
		return dir
	}
	return ""
}
