package receive

import (
	"crypto/sha256"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
)

// BuildID names the running code, for memos of what it computed (the idle
// queue pass's, `pr list`'s; docs/scale.md): the build information of the
// binary (module versions, VCS revision and state) and the executable's
// path, size and modification time, so that another build, a rebuilt
// binary included, is another name. nil when either cannot be read: no
// memo then.
var BuildID = sync.OnceValue(func() []byte {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return nil
	}
	h := sha256.New()
	h.Write([]byte(bi.String()))
	h.Write([]byte("\x00" + exe + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)))
	return h.Sum(nil)
})
