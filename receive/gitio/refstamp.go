package gitio

import (
	"errors"
	"io/fs"
	"os"
)

// fileStamp identifies one version of a file git replaces by rename
// (packed-refs): a new version is a new inode, and its size or
// modification time differ from an inode number reused. The zero stamp
// stands for a file that does not exist.
type fileStamp struct {
	exists   bool
	dev, ino uint64
	size     int64
	mtime    int64 // nanoseconds since 1970
}

func stampOf(fi fs.FileInfo) fileStamp {
	dev, ino := fileID(fi)
	return fileStamp{exists: true, dev: dev, ino: ino, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

// stampPath is the stamp of the file at path now.
func stampPath(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, err
	}
	return stampOf(fi), nil
}
