package trust

import (
	"fmt"
	"strings"

	"github.com/gitplus/gitplus/hubrefs"
)

// Capabilities (docs/trust.md).
const (
	CapAdmin       = "repo.admin" // implies every other capability
	CapSourcePush  = "source.push"
	CapSourceTag   = "source.tag" // push tags (refs/tags/*) when the rules require a known pusher
	CapPR          = "hub.pr"
	CapReview      = "hub.review"
	CapQueue       = "hub.queue"
	CapBypass      = "hub.bypass" // dismiss a changes request (docs/trust.md)
	CapCheckPrefix = "hub.check:" // followed by a check name
)

// CheckCap returns the capability that lets a member report check name.
func CheckCap(name string) string { return CapCheckPrefix + name }

// ValidCap reports whether c is a capability git+ knows. An unknown
// capability is an error naming it (ErrUnknownCap).
func ValidCap(c string) error {
	switch c {
	case CapAdmin, CapSourcePush, CapSourceTag, CapPR, CapReview, CapQueue, CapBypass:
		return nil
	}
	if ok, err := validBypassCap(c); ok { // bypasscap.go
		return err
	}
	if name, ok := strings.CutPrefix(c, CapCheckPrefix); ok {
		if err := ValidCheckName(name); err != nil {
			return fmt.Errorf("%w %q: %w", ErrUnknownCap, c, err)
		}
		return nil
	}
	return fmt.Errorf("%w %q: use one of repo.admin, source.push, source.tag, hub.pr, hub.review, hub.queue, hub.bypass, hub.bypass:<branch pattern>, hub.check:<name>", ErrUnknownCap, c)
}

func validCaps(caps []string) error {
	seen := make(map[string]bool, len(caps))
	for _, c := range caps {
		if err := ValidCap(c); err != nil {
			return err
		}
		if seen[c] {
			return fmt.Errorf("%w: capability %q listed twice", ErrMalformed, c)
		}
		seen[c] = true
	}
	return nil
}

// ValidCheckName reports whether name may name a check: 1 to 100 bytes of
// ASCII letters, digits, '.', '_', '-' and '/', starting with a letter or digit.
func ValidCheckName(name string) error { return validIdent("check name", name, 100, "._-/") }

// ValidName reports whether name may name a member: 1 to 64 bytes of ASCII
// letters, digits, '.', '_' and '-', starting with a letter or digit. Member
// names appear in commit identities (<name@hub.invalid>) and as principals in
// git's allowed-signers file, so nothing else is safe there.
func ValidName(name string) error { return validIdent("member name", name, 64, "._-") }

// validIdent reports whether name may be a kind ("member name"): 1 to max
// bytes of ASCII letters, digits and the characters of punct, starting with
// a letter or digit.
func validIdent(kind, name string, max int, punct string) error {
	if name == "" {
		return fmt.Errorf("%w: empty %s", ErrMalformed, kind)
	}
	if len(name) > max {
		return fmt.Errorf("%w: %s %.20q... is longer than %d bytes", ErrMalformed, kind, name, max)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && (i == 0 || strings.IndexByte(punct, c) < 0) {
			return fmt.Errorf("%w: %s %q: only letters, digits and %s are allowed, starting with a letter or digit", ErrMalformed, kind, name, strings.Join(strings.Split(punct, ""), " "))
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ValidUUID reports whether s is a UUID in its canonical 36-character form
// (RepoIDs, pull request and queue ids). Any version is accepted.
func ValidUUID(s string) error {
	if len(s) != 36 {
		return fmt.Errorf("%w: %q is not a UUID (want the 36-character form)", ErrMalformed, s)
	}
	// Checked by hand rather than with github.com/google/uuid, which links
	// the net package (for MAC addresses) and with it cgo: the hook binary
	// would then start through the dynamic loader on every push.
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return fmt.Errorf("%w: %q is not a lower-case UUID", ErrMalformed, s)
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return fmt.Errorf("%w: %q is not a lower-case UUID", ErrMalformed, s)
			}
		}
	}
	return nil
}

// ParseKey parses an authorized_keys line ("<type> <base64> [comment]")
// holding an ed25519, ecdsa or rsa key, without options, and returns the key
// and its normalised line ("<type> <base64>", comment dropped).
func ParseKey(line string) (hubrefs.PublicKey, string, error) {
	if strings.ContainsAny(line, "\r\n") {
		return nil, "", fmt.Errorf("%w: key must be one authorized_keys line", ErrBadKey)
	}
	key, _, err := hubrefs.ParseAuthorizedKeyLine(line)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %q is not an authorized_keys line \"<type> <base64> [comment]\" of an ed25519, ecdsa or rsa key (options are not taken): %w", ErrBadKey, clip(line), err)
	}
	return key, hubrefs.AuthorizedKey(key), nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// ValidRef reports whether name is a full ref name (refs/...) following
// git's check-ref-format rules, with no glob.
func ValidRef(name string) error { return validRef(name, false) }

// ValidBranch reports whether name is a full branch name (refs/heads/...).
func ValidBranch(name string) error {
	if err := validRef(name, false); err != nil {
		return err
	}
	if !strings.HasPrefix(name, "refs/heads/") {
		return fmt.Errorf("%w: %q is not a branch; write it in full (refs/heads/...)", ErrBadRef, name)
	}
	return nil
}

// ValidPattern reports whether p is a full ref name or a glob of one: '*'
// matches any run of characters within one path segment; "**" is refused.
func ValidPattern(p string) error { return validRef(p, true) }

func validRef(name string, glob bool) error {
	if !strings.HasPrefix(name, "refs/") || len(name) == len("refs/") {
		return fmt.Errorf("%w: %q is not a full ref name; write it in full (refs/heads/...)", ErrBadRef, name)
	}
	if strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.HasSuffix(name, ".") {
		return fmt.Errorf("%w: %q breaks git's ref name rules (no \"..\", \"@{\" or trailing \".\")", ErrBadRef, name)
	}
	if glob && strings.Contains(name, "**") {
		return fmt.Errorf("%w: %q: \"**\" is not supported; '*' matches within one path segment", ErrBadRef, name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") || strings.HasSuffix(seg, ".lock") {
			return fmt.Errorf("%w: %q has an empty segment, a segment starting with \".\" or ending with \".lock\"", ErrBadRef, name)
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?[\\", c) >= 0 || (c == '*' && !glob) {
			return fmt.Errorf("%w: %q contains %q, which git does not allow in a ref name", ErrBadRef, name, string(c))
		}
	}
	return nil
}

// matchRef reports whether ref matches pattern: same number of segments,
// '*' matching any run of characters inside one segment.
func matchRef(pattern, ref string) bool {
	ps, rs := strings.Split(pattern, "/"), strings.Split(ref, "/")
	if len(ps) != len(rs) {
		return false
	}
	for i := range ps {
		if !matchSeg(ps[i], rs[i]) {
			return false
		}
	}
	return true
}

func matchSeg(p, s string) bool {
	star := strings.IndexByte(p, '*')
	if star < 0 {
		return p == s
	}
	if !strings.HasPrefix(s, p[:star]) {
		return false
	}
	p, s = p[star+1:], s[star:]
	for i := 0; i <= len(s); i++ {
		if matchSeg(p, s[i:]) {
			return true
		}
	}
	return false
}
