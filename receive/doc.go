// Package receive is the git side of receiving a push: the quarantine-aware
// object store (this file's neighbours store*.go and packidx*.go), hook input
// parsing and running the policy inside pre-receive, and the client side of
// landing.
package receive
