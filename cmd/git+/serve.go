package main

// git+ serve: package hooks/serve run from the command line
// (docs/serving.md). SIGINT or SIGTERM shut the server down cleanly. An
// error a verb returns is printed and exits 1 (run, in main.go).

import (
	"context"
	"log"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/serve"
	"github.com/gitplus/gitplus/hooks/wake"
)

func init() {
	register(&cli.Command{
		Name:  "serve",
		Usage: "serve the git+ repositories under --root over git's smart HTTP (and SSH with --ssh), with git+'s hooks",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "directory holding the bare repositories", Required: true},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080", Usage: "HTTP address to listen on (port 0: any free port)"},
			&cli.StringFlag{Name: "ssh", Usage: "also serve over SSH on this address (port 0: any free port)"},
			&cli.StringFlag{Name: "host-key", Usage: "the SSH host key file, created if missing and reused (default ROOT/.gitplus/ssh_host_ed25519_key)"},
			&cli.BoolFlag{Name: "private", Usage: "HTTP reads need a member token too, and a client not authenticated for a repository learns nothing of it, not even whether it exists (default: anonymous reads)"},
			&cli.StringFlag{Name: "adopt", Usage: "SSH private key FILE: git+ init every repository without refs/hub/trust, with this key as admin"},
			&cli.StringFlag{Name: "check-rate", Value: serve.DefaultCheckRate.String(), Usage: "N/DURATION: each client address may make N requests to the check endpoints (/hub/checks/prepare|append) per DURATION, in bursts of up to N; more are answered 429 with Retry-After"},
		},
		Action: nargs(0, 0, "usage: git+ serve --root DIR [--listen ADDR] [--ssh ADDR] [--host-key FILE] [--private] [--adopt KEYFILE] [--check-rate N/DURATION]", serveAction),
	})
}

func serveAction(c *cli.Context) error {
	bin, err := wake.Executable()
	if err != nil {
		return err
	}
	rate, err := serve.ParseRate(c.String("check-rate"))
	if err != nil {
		return usageErr("--check-rate: %v", err)
	}
	// gitkit logs each request with the standard logger, path included:
	// a client's bytes, which reach the operator's terminal escaped like
	// all git+ text (docs/cli.md "Text on a terminal").
	log.SetOutput(c.App.ErrWriter)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return serve.Run(ctx, serve.Config{Root: c.String("root"), Listen: c.String("listen"), SSH: c.String("ssh"),
		HostKey: c.String("host-key"), Private: c.Bool("private"), Adopt: c.String("adopt"), Binary: bin,
		CheckRate: rate, Stdout: c.App.Writer, Stderr: c.App.ErrWriter})
}
