// Package gitio is git+'s one home for git I/O (docs/architecture.md,
// docs/objects.md): reading objects (loose, packs, the push quarantine,
// alternates, prefix and header reads), writing loose objects, reading refs
// (loose, packed, symbolic), and the client side of a compare-and-swap
// `git push` with its per-ref result (push.go, pushenv.go, remote.go), and a
// repository's own config file read without starting git (config.go). It
// sits at the bottom of the import graph: it imports go-git's plumbing and
// the standard library only, so receive, hubrefs, hooks and cmd all use it
// and none keeps a reader, writer or push client of its own. Parsing a
// commit or a tree is receive/gitobj's.
//
// # Object store
//
// OpenStore(gitDir, env) returns a *Store implementing go-git's
// storer.EncodedObjectStorer, so object.GetCommit(store, h) and friends work,
// plus a raw path for the merge engine: ReadRaw (type and content, no copy),
// ObjectInfo (type and size from headers only), HasObject and WriteRaw.
//
// Layers, in lookup order, duplicates removed after cleaning the path
// (receive-pack passes unclean ones like /x/r.git/./objects):
//  1. the primary object directory: GIT_OBJECT_DIRECTORY, else
//     GIT_QUARANTINE_PATH, else <gitDir>/objects;
//  2. the quarantine directory, if not already the primary;
//  3. every directory of GIT_ALTERNATE_OBJECT_DIRECTORIES (colon-separated;
//     git's C-style quoting of an entry is not supported);
//  4. <gitDir>/objects;
//  5. for each directory above, its info/alternates, recursively up to five
//     levels as git does (relative entries are relative to that directory).
//
// Directories that do not exist are skipped (git warns and carries on). The
// package never reads the environment itself: the cmd layer passes
// QuarantineFromEnviron(os.Environ()).
//
// A lookup first asks every pack index of every layer (in memory, no system
// call; the pack that answered last is asked first), then tries the loose
// file in each layer. On a miss, any pack/ directory whose mtime changed is
// listed again and the lookup retried once, so a long-lived process sees
// packs written by a concurrent repack or push. A missing object is an error
// wrapping plumbing.ErrObjectNotFound that names the id; asking
// EncodedObject for the wrong type is "not found" too, as the interface
// requires. Because the sentinel is wrapped, go-git code that compares with
// == (tree walkers) sees a hard error instead of silently stopping — what
// the boundary wants (docs/objects.md).
//
// # Writes
//
// One writer, writeLoose: outside a hook SetEncodedObject/WriteRaw (and
// WriteLooseObject, for a caller with a git directory and no store) write a zlib-compressed loose
// object into the primary directory (temporary file, rename, mode 0444, no
// fsync — git 2.39's default); an object already present is not rewritten.
// Inside a hook (GIT_QUARANTINE_PATH set) every write fails with
// ErrQuarantineWrite: the boundary hashes merge results in memory.
//
// # Pack reading: why our own reader
//
// go-git decodes a pack's whole .idx on first use and its packfile reader
// needs offset → id (FindHash) for every ofs-delta base, which without a .rev
// file means sorting every offset of the pack; it also funnels every read
// through one seeking scanner. We read packs ourselves instead:
//
//   - PackIndex maps the .idx (version 2) read-only with mmap (falling back to
//     reading the file) and answers id → offset by binary search inside the
//     fan-out bucket, including the 64-bit offset table. Opening validates the
//     header, the fan-out order and the table sizes only: O(1) work
//     regardless of the pack size. Checksums are not verified (git does not
//     on read either). PackIndex also implements idxfile.Index; its offset →
//     id side uses the .rev file when present (git 2.39 writes one only with
//     pack.writeReverseIndex) and otherwise sorts the offsets once, lazily.
//     The store's read path never needs it.
//   - The .pack is mapped too. An object is found by walking its delta chain
//     (ofs-deltas by offset, ref-deltas by the same pack's index, else through
//     the whole store), inflating with a pooled compress/zlib reader that must
//     end exactly at the announced size (the zlib checksum is checked), and
//     applying deltas with bounds checks. Chains are capped at 10,000.
//   - An LRU cache (48 MiB, keyed by pack and offset) keeps delta bases and
//     recently read objects; objects over 1/8 of it are not cached. Slices
//     returned by ReadRaw/Object.Bytes may be shared with it: never modify
//     them. They never point into a mapping, so Close does not invalidate them.
//   - Objects come back as *Object, a read-only plumbing.EncodedObject that
//     knows its id (no rehash). Contents are not re-hashed on read.
//
// Measured on bench/genrepo.sh's default repository (20,000 files, 10,000
// commits, one 9 MB pack with a 3.9 MB .idx, 140k objects; a loaded 2-CPU
// VM, so medians of noisy runs), cold open each time:
//
//	open + tip commit + root tree      store ≈ 0.9 ms, go-git filesystem ≈ 40–75 ms,
//	                                   git cat-file --batch ≈ 15–20 ms
//	open + a tree deep in a delta chain store ≈ 1.5 ms, go-git filesystem ≈ 40–70 ms,
//	                                   go-git packfile reader on our lazy index ≈ 30–50 ms
//	                                   (the offset sort for FindHash)
//	all 1,052 trees of the tip, warm   ReadRaw ≈ 0.5 ms; through go-git's Tree
//	                                   decoding ≈ 12 ms; go-git filesystem ≈ 100 ms
//
// Not supported: .idx version 1, SHA-256 repositories, the multi-pack-index
// (each pack's own .idx is used, which git keeps), reftable.
//
// # Refs
//
// Refs are not part of the store. ReadRefs(gitDir) walks refs/ (loose refs
// win) and then reads packed-refs, as git does: a ref git pack-refs moves
// from its loose file into packed-refs meanwhile is in one or the other,
// and a directory it deletes during the walk is skipped, not an error.
// Symbolic refs resolve (HEAD, up to five levels); an unborn symbolic ref
// is left out. ReadRef resolves one name (loose file first, then
// packed-refs); ReadSymbolicRef returns a symbolic ref's target. A missing
// ref wraps plumbing.ErrReferenceNotFound; a malformed one ErrBadRef.
// Reftable (not in git 2.39) is not supported. OpenRefs keeps packed-refs
// for a series of reads (the hook's), checking after each loose miss that
// the file is still the one it read and reading it again when git replaced
// it.
// Refs are written only by git itself: UpdateRef and SwapRef (with an
// expected old value) run git update-ref, which takes git's lock file.
//
// # Pushing
//
// Push is the one push client: every update carries its expected old value
// (--force-with-lease), several go --atomic, and the outcome is read per ref
// from `git push --porcelain`, with the hook's "git+:" lines (HookLines).
// A lost race is ErrPushStale, a hook refusal *PushRefusedError, a push git
// did not report ErrPushTransport (see push.go for the classification). A
// push into "." carries its push options in the environment (pushenv.go).
package gitio
