// Package install installs git+ as a bare repository's receive hooks and
// checks that the boundary is in place (docs/operating.md, "Installing the
// hooks", "Ownership and the hook user", "Installing on gitolite" and
// "Checking the boundary: git+ hook check"): the hook scripts, chaining any
// hook already there (install.go), one install at a time (installlock.go),
// never over gitolite's driver (gitolite.go), only where the hook user can
// use what is written (owner.go, preflight.go); the lean pre-receive binary
// and the running binary's version (lean.go, version.go); and `git+ hook
// check`: whether the pre-receive git runs reaches git+ (hookcheck.go) and
// what will refuse or silently unprotect pushes (hookcheck_ops.go), with
// its text and exit status (checktext.go).
package install
