//go:build !unix

package gitio

import "os"

func fileUID(os.FileInfo) (int, bool)      { return 0, false }
func fileID(os.FileInfo) (dev, ino uint64) { return 0, 0 }
