package install

import (
	"runtime/debug"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	mk := func(version string, kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.22", Main: debug.Module{Path: "github.com/gitplus/gitplus", Version: version}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	cases := []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{mk("v1.2.3", "vcs.revision", "abc123", "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "false"), "github.com/gitplus/gitplus v1.2.3 revision abc123 (2026-01-02T03:04:05Z) go1.22"},
		{mk("", "vcs.revision", "abc123", "vcs.modified", "true"), "github.com/gitplus/gitplus (devel) revision abc123+dirty go1.22"},
		{mk("(devel)"), "github.com/gitplus/gitplus (devel) revision unknown go1.22"},
	}
	for _, tc := range cases {
		if got := DescribeBuild(tc.bi); got != tc.want {
			t.Errorf("DescribeBuild = %q, want %q", got, tc.want)
		}
	}
}
