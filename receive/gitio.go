package receive

// Thin aliases of receive/gitio, where git I/O now lives (docs/objects.md,
// docs/architecture.md), for callers that still name them through receive.
// New code imports receive/gitio directly.

import "github.com/gitplus/gitplus/receive/gitio"

// The object store.
type (
	Store         = gitio.Store
	QuarantineEnv = gitio.QuarantineEnv
)

var (
	OpenStore             = gitio.OpenStore
	QuarantineFromEnviron = gitio.QuarantineFromEnviron
)

// Refs.
var (
	ReadRefs       = gitio.ReadRefs
	ReadRefsUnder  = gitio.ReadRefsUnder
	ReadRef        = gitio.ReadRef
	SymbolicTarget = gitio.SymbolicTarget
)

// The compare-and-swap push client.
type (
	PushUpdate       = gitio.PushUpdate
	PushOptions      = gitio.PushOptions
	PushSigning      = gitio.PushSigning
	PushResult       = gitio.PushResult
	RefResult        = gitio.RefResult
	PushRefusedError = gitio.PushRefusedError
)

var (
	Push           = gitio.Push
	ErrPushStale   = gitio.ErrPushStale
	ErrPushRefused = gitio.ErrPushRefused
	ErrPushFailed  = gitio.ErrPushFailed
)
