package gitio

import (
	"os"
	"path/filepath"
	"testing"
)

// A file written atomically holds all its parts with its mode; a write
// that cannot be renamed into place leaves no temporary file.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteFileAtomic(p, ".tmp-*", 0o755, []byte("a"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "ab" {
		t.Fatalf("%q %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "d"), ".tmp-*", 0, []byte("c")); err == nil {
		t.Fatal("renamed over a directory that is not empty")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(m) != 0 {
		t.Fatalf("left %v", m)
	}
}
