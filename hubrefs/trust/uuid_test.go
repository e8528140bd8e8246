package trust

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// oldValidUUID is the check ValidUUID replaced, with google/uuid.
func oldValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	u, err := uuid.Parse(s)
	return err == nil && u.String() == strings.ToLower(s) && s == strings.ToLower(s)
}

func TestValidUUID(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"01900000-0000-7000-8000-0000000000aa", true},
		{uuid.Must(uuid.NewV7()).String(), true},
		{"01900000-0000-7000-8000-0000000000AA", false}, // upper case
		{"01900000000070008000-0000000000aa-", false},
		{"{1900000-0000-7000-8000-0000000000a}", false},
		{"01900000-0000-7000-8000-0000000000a", false},
		{"01900000-0000-7000-8000-0000000000ag", false},
		{"", false},
	} {
		if got := ValidUUID(tc.s) == nil; got != tc.ok || oldValidUUID(tc.s) != tc.ok {
			t.Errorf("ValidUUID(%q) ok = %v, google/uuid %v, want %v", tc.s, got, oldValidUUID(tc.s), tc.ok)
		}
	}
}

func FuzzValidUUID(f *testing.F) {
	f.Add("01900000-0000-7000-8000-0000000000aa")
	f.Add("01900000-0000-7000-8000-0000000000AA")
	f.Fuzz(func(t *testing.T, s string) {
		if (ValidUUID(s) == nil) != oldValidUUID(s) {
			t.Fatalf("ValidUUID(%q) = %v, google/uuid says %v", s, ValidUUID(s), oldValidUUID(s))
		}
	})
}
