// Package hooks wires the after-push chain git runs from post-receive
// (docs/operating.md, docs/delivery.md): postreceive.go reads a push's
// updates and new events once, raises the unjudged-update alarm, starts
// the wake rules the push wakes, and spools its webhook deliveries and
// mirror changes for the delivery worker; gitdir.go says which repository
// a hook runs for. What each step does lives in the room of its concern:
//
//   - hooks/install: installing the hook scripts and checking the boundary
//     (`git+ hook install|check`, `git+ init`);
//   - hooks/delivery: the delivery spool, its worker, webhooks and mirrors
//     (hooks/delivery/webhookpost sends over HTTP);
//   - hooks/wake: wake rules and the server's own identity (its key, who
//     pushed, push options);
//   - hooks/opstatus: what operators are shown (wake outcomes, the alarm,
//     the published status ref);
//   - hooks/config: the configuration files' names and strict reading;
//
// and beside them hooks/serve (`git+ serve`), hooks/webview (the page),
// hooks/metrics (/metrics) and hooks/demo (`git+ demo`). The rooms never
// import this package: imports run from here down (docs/architecture.md).
package hooks
