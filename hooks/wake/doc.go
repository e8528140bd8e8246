// Package wake is the wake rules and the server's own identity. Wake rules
// (docs/operating.md "Wake rules", docs/ci.md): hub/wake.json
// (wakeconfig.go), which rules a push wakes and their detached runs
// (wake.go), the environment a rule's command gets (wakeenv.go), a run
// supervised to its outcome (wakerun.go) and rules run by hand (`git+
// wake`, wakehand.go). The server's own identity (docs/serving.md "The
// server's own pushes", "Identity from the host", "Push options: which are
// honoured from whom"): its signing key and its binary (serverkey.go),
// which environment variables say who pushed (pusherenv.go), whether a
// pusher came over the network (remotepusher.go), and which of git+'s push
// options a push's chain honours (pushopts.go).
package wake
