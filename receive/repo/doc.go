// Package repo is a git+ repository opened from Go: what every `git+` hub
// verb does (open the repository and its remote, fold the trust log, pull
// requests and queues, sign and append events) as an importable API. The
// command line (cmd/git+) parses flags, calls this package and prints.
//
// A program opens a repository with Open (a bare repository is its own
// remote; a clone writes through its upstream remote, docs/cli.md "Which
// remote"), loads a signing key with LoadKey, and gets a Signing with
// OpenSigning: the repository, the trust state folded now, the key and the
// member holding it. The writers are methods of Signing (members, rules,
// queues) and of PR (a pull request folded for writing). Every writer
// judges the new event locally first (the same fold or authorisation the
// boundary applies) and writes nothing when it would be refused; the
// receiving hook judges it again, since only the boundary's judgement
// counts (docs/boundary.md).
//
// Decisions:
//   - Messages name the repository, the ref and what to do, exactly as the
//     CLI prints them; usage mistakes found only here (a detached HEAD for
//     a default head, --push to the repository itself) are sentinel errors
//     the CLI turns into its usage messages.
//   - A Signing, and a PR, hold the states folded when they were opened: a
//     writer judges against them and does not re-read after writing (the
//     CLI runs one writer per process). Open them again to write on top of
//     one's own events (the receiving hook judges every event against
//     the state it finds anyway).
//   - Repo.OnAppend and Repo.OnPush report every event appended and every
//     branch pushed, so a caller can journal them (the CLI's --json).
//   - Trust is read with generous ceilings (a client reads; the boundary
//     enforces the rules' ceilings); pull requests and queues with the
//     rules' ceilings.
package repo
