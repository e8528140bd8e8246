package gitio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{
		"", "\n", strings.Repeat("a", 40) + "\n", strings.Repeat("a", 40),
		strings.Repeat("b", 63) + "\n", strings.Repeat("c", 64), strings.Repeat("d", 127) + "\n",
		strings.Repeat("e", 128), strings.Repeat("line\n", 100), strings.Repeat("x", 5000),
	} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		for name, read := range map[string]func(string, int, int) ([]byte, error){"readFile": readFile, "readLineFile": readLineFile} {
			got, err := read(p, 64, 1<<20)
			if err != nil || string(got) != content {
				t.Fatalf("%s of %d bytes: got %d bytes, %v", name, len(content), len(got), err)
			}
			if _, err := read(p, 64, len(content)-1); len(content) > 0 && err == nil {
				t.Fatalf("%s: %d bytes read under a limit of %d", name, len(content), len(content)-1)
			}
		}
	}
	if _, err := readLineFile(filepath.Join(dir, "absent"), 64, 1<<20); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := readFile(dir, 64, 1<<20); err == nil {
		t.Fatal("reading a directory succeeded")
	}
}
