package gitio

import (
	"testing"

	"github.com/matryer/is"
)

func TestHookLines(t *testing.T) {
	is := is.New(t)
	stderr := "remote: git+: refused refs/hub/a: [x] not OK        \n" +
		"remote: git+: refused refs/hub/b: [y] why\x1b[K\n" +
		"remote: other\nerror: failed to push some refs to '.'\n" +
		"git+: refused refs/hub/c: [z] local\n"
	is.Equal(HookLines([]byte(stderr)), []string{
		"git+: refused refs/hub/a: [x] not OK",
		"git+: refused refs/hub/b: [y] why",
		"git+: refused refs/hub/c: [z] local",
	})
	got := parsePorcelain([]byte("To .\n!\tabc:refs/hub/x\t[rejected] (stale info)\nDone\n"))
	is.Equal(got["refs/hub/x"], RefResult{Ref: "refs/hub/x", Flag: '!', Status: "[rejected] (stale info)"})
	_, ok := parsePorcelain([]byte("To .\n*\tabc:refs/hub/xy\t[new reference]\n"))["refs/hub/x"]
	is.True(!ok)
}

func TestOnlyMoved(t *testing.T) {
	cases := []struct {
		lines []string
		want  bool
	}{
		{nil, false},
		{[]string{"git+: refused refs/hub/trust: [ref-moved] refs/hub/trust is at 1234, not 5678 as the push expects"}, true},
		{[]string{"git+: refused refs/hub/trust: [ref-moved] x", "git+: refused refs/heads/main: [not-approved] y"}, false},
		{[]string{"git+: refused refs/hub/trust: [not-member] z"}, false},
	}
	for i, c := range cases {
		if got := OnlyMoved(c.lines); got != c.want {
			t.Errorf("case %d: OnlyMoved = %v, want %v", i, got, c.want)
		}
	}
}
