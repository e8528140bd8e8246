//go:build !linux

package sandbox

import "errors"

var probe = func() (int, string) { return 0, "Landlock is Linux's" }

// ABI returns the Landlock ABI version the kernel offers: none here.
func ABI() (int, string) { return probe() }

func confine(in instructions) error {
	if in.ABI > 0 {
		return errors.New("Landlock is Linux's")
	}
	return nil
}

// ProtectSelf does nothing outside Linux.
func ProtectSelf() error { return nil }
