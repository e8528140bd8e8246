// Package receive is the git side of receiving a push (docs/architecture.md,
// docs/boundary.md): parsing the hook's input, establishing who pushes (push
// certificates, the transport's word, another host's authenticated user as
// the repository's gitplus.pusher says: hostident.go), running policy inside
// pre-receive over the quarantine-aware object store, and the fold cache's
// files.
//
// Git I/O itself — the object store, refs, the push client — lives in
// receive/gitio; gitio.go keeps aliases of its names (Store, OpenStore,
// ReadRefs, Push, ...) for callers that still name them through receive.
package receive
