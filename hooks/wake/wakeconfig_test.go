package wake

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/config"
)

// TestConfigSyntaxErrorPosition: a configuration file with a syntax error
// is reported with its path, line and column.
func TestConfigSyntaxErrorPosition(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(config.WakeFile)), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "{\n  \"rules\": [\n    {\"ref\": \"refs/heads/main\",}\n  ]\n}\n"
	if err := os.WriteFile(filepath.Join(dir, config.WakeFile), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadWake(dir)
	if err == nil || !errors.Is(err, config.ErrConfig) {
		t.Fatalf("LoadWake: %v, want ErrConfig", err)
	}
	if !strings.Contains(err.Error(), config.WakeFile+":3:30: a trailing comma") { // the comma, not the brace after it
		t.Fatalf("error does not name the file and position: %v", err)
	}
}

// The after-push configuration files name a trailing comma too.
func TestConfigTrailingComma(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hub"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "{\"rules\": [\n  {\"ref\": \"refs/heads/*\", \"on\": [\"*\"], \"run\": [\"true\"]},\n]}\n"
	if err := os.WriteFile(filepath.Join(dir, config.WakeFile), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadWake(dir)
	if err == nil || !strings.Contains(err.Error(), config.WakeFile+":2:56: a trailing comma before ']'") {
		t.Fatalf("LoadWake: %v", err)
	}
}
