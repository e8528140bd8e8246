package main

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestNormalizeArgsOneLevel(t *testing.T) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "key"},
		&cli.StringSliceFlag{Name: "cap"},
		&cli.BoolFlag{Name: "json"},
		&cli.BoolFlag{Name: "approve"},
	}
	cases := []struct{ in, want string }{
		{"ID --json", "--json -- ID"},
		{"bob --key K --cap a --cap b", "--key K --cap a --cap b -- bob"},
		{"--key=K bob --approve", "--key=K --approve -- bob"},
		{"- --json", "--json -- -"},
		{"ID -- --json", "-- ID --json"},
		{"--json=false ID", "--json=false -- ID"},
		{"", ""},
	}
	for _, c := range cases {
		got := strings.Join(normalizeArgs(flags, nil, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("normalizeArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
