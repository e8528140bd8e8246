package delivery

// ResumeDeliveries starts gitDir's delivery worker (binary, as
// post-receive does) when a mirror is behind or a webhook delivery is
// pending, and returns at once: what a push left without a worker — `git+
// serve` killed mid-push, after git moved the refs and before post-receive
// ran, or the worker killed — goes out when the server starts again, with
// no push needed (docs/delivery.md, "Mirrors follow the refs, not only the
// records"). A worker already running is left alone.
func ResumeDeliveries(gitDir, binary string, environ []string) error {
	if (&Worker{GitDir: gitDir}).hasWork() {
		return StartWorker(gitDir, binary, environ)
	}
	return nil
}
