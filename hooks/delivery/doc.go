// Package delivery is the after-push delivery (docs/delivery.md): what
// post-receive spools and the worker that settles it, out of the push's
// way. Webhooks in git+'s format (webhook.go) or GitHub's (github.go),
// their retry schedule (schedule.go); mirrors, pushed everything and
// reconciled from the refs (mirror.go, mirrorrefs.go); the spool's records
// and locks (spool.go), what a full disk keeps in memory (spoolfull.go),
// the worker (worker.go) and its restart after a server stops
// (resume.go); hub/remotes.json and hub/webhooks.json (config.go); what
// `git+ webhook deliveries|redeliver` and `git+ mirror status|sync` show
// and do, and a verb's wait for its own deliveries (status.go, await.go).
//
// Nothing here speaks HTTP: an attempt goes through a Post (Via), and the
// HTTP one is package webhookpost, so the post-receive hook, which links
// this package, links no HTTP client.
package delivery
