package checkworker

import "testing"

// hideCredentials (credentials.go): the password leaves the URL for a
// credential helper in the environment, after the configuration entries
// already there.
func TestHideCredentials(t *testing.T) {
	env := map[string]string{"GIT_CONFIG_COUNT": "2"}
	u, got := hideCredentials("http://ci:t0ken@127.0.0.1:8080/team/app.git", func(k string) string { return env[k] })
	if u != "http://ci@127.0.0.1:8080/team/app.git" {
		t.Errorf("URL %q", u)
	}
	want := map[string]string{credentialEnv: "t0ken", "GIT_CONFIG_COUNT": "3",
		"GIT_CONFIG_KEY_2": "credential.http://127.0.0.1:8080.helper", "GIT_CONFIG_VALUE_2": credentialHelper}
	if len(got) != len(want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, plain := range []string{"http://ci@host/r.git", "/srv/git/r.git", "ssh://git@host/r.git", "https://host/r.git"} {
		if u, got := hideCredentials(plain, func(string) string { return "" }); u != plain || got != nil {
			t.Errorf("%s: %q %q, want it unchanged and no entries", plain, u, got)
		}
	}
}
