package checkrun

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs/pr"
)

// The verbs' sandbox flags: GITPLUS_KEY is never passed, a bad mode or
// name is the flag's mistake, reads are made absolute.
func TestSandboxOf(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		passEnv []string
		want    string
	}{
		{"best-effort", []string{"GITPLUS_KEY"}, "--pass-env GITPLUS_KEY: the key that signs"},
		{"best-effort", []string{"A=B"}, "--pass-env:"},
		{"sometimes", nil, "--sandbox:"},
	} {
		if _, err := SandboxOf(tc.mode, tc.passEnv, nil, nil, "", false); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.mode, tc.passEnv, err, tc.want)
		}
	}
	if _, err := SandboxOf("off", nil, nil, nil, "", true); err == nil || !strings.HasPrefix(err.Error(), "--confine-reads needs the sandbox") {
		t.Errorf("--confine-reads with --sandbox off: %v", err)
	}
	if sb, err := SandboxOf("", nil, nil, nil, "", true); err != nil || !sb.ConfineReads {
		t.Errorf("--confine-reads: %+v %v", sb, err)
	}
	sb, err := SandboxOf("off", []string{"HOME"}, nil, []string{"rel"}, "nobody", false)
	want, _ := filepath.Abs("rel")
	if err != nil || len(sb.Reads) != 1 || sb.Reads[0] != want || sb.RunAs != "nobody" || sb.PassEnv[0] != "HOME" {
		t.Fatalf("%+v %v", sb, err)
	}
}

// check run passes when the check succeeded or did not run.
func TestResultPassed(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want bool
	}{
		{Result{Conclusion: pr.Success}, true},
		{Result{Conclusion: pr.Failure}, false},
		{Result{Conclusion: pr.Cancelled}, false},
		{Result{Skipped: "another worker holds the lease"}, true},
	} {
		if got := tc.r.Passed(); got != tc.want {
			t.Errorf("%+v: %v", tc.r, got)
		}
	}
}
