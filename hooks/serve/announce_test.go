package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/wake"
)

// A repository with wake rules that name the server's key and no key for
// them is warned about at start; a key in serve's environment or
// gitplus.serverKey silences it. A rule running git+ without "key" is
// warned about too: it gets no key.
func TestWakeWarningsNoKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte("[core]\n\tbare = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if w := wakeWarnings(dir, getenv); len(w) != 0 {
		t.Fatalf("no wake.json: %q", w)
	}
	rules := `{"rules":[{"name":"queue","ref":"refs/hub/pr/*","on":["pr.reviewed"],"run":["sh","-c","true"],"key":"server"}]}`
	if err := os.WriteFile(filepath.Join(dir, config.WakeFile), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	w := wakeWarnings(dir, getenv)
	if len(w) != 1 || !strings.Contains(w[0], "no signing key is available") || !strings.Contains(w[0], "gitplus.serverkey") {
		t.Fatalf("wake rules, no key: %q", w)
	}
	env[wake.EnvKey] = "/some/key"
	if w := wakeWarnings(dir, getenv); len(w) != 0 {
		t.Fatalf("GITPLUS_KEY set: %q", w)
	}
	delete(env, wake.EnvKey)
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte("[core]\n\tbare = true\n[gitplus]\n\tserverKey = /nonexistent/key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := wakeWarnings(dir, getenv); len(w) != 1 || !strings.Contains(w[0], "cannot be read") {
		t.Fatalf("serverKey missing: %q", w)
	}
	rules = `{"rules":[{"name":"queue","ref":"refs/hub/pr/*","on":["check.completed"],"run":["git+","queue","run","--target","main"]}]}`
	if err := os.WriteFile(filepath.Join(dir, config.WakeFile), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := wakeWarnings(dir, getenv); len(w) != 1 || !strings.Contains(w[0], `wake rule queue runs git+ without "key": "server"`) {
		t.Fatalf("a rule running git+ without a key: %q", w)
	}
	// A rule whose command names its own key (--key FILE) needs none.
	for _, run := range []string{`["git+","--key","/srv/q.key","queue","run","--target","main"]`, `["git+","queue","run","--key=/srv/q.key"]`} {
		rules = `{"rules":[{"name":"queue","ref":"refs/hub/pr/*","on":["check.completed"],"run":` + run + `}]}`
		if err := os.WriteFile(filepath.Join(dir, config.WakeFile), []byte(rules), 0o644); err != nil {
			t.Fatal(err)
		}
		if w := wakeWarnings(dir, getenv); len(w) != 0 {
			t.Fatalf("a rule naming its own key (%s): %q", run, w)
		}
	}
}
