package gitobj

// Spellings of ".git" and ".gitmodules" that git refuses because a file
// system would take them for the real name (docs/objects.md).

// isHFSDot reports whether HFS+ would take name for "." + needle (needle
// lower-case ASCII): HFS+ ignores some Unicode code points entirely and
// folds case. A name that is not valid UTF-8 where the needle ends counts,
// as in git: the broken character is read as the end of the name.
func isHFSDot(name []byte, needle string) bool {
	c, name := nextHFS(name)
	if c != '.' {
		return false
	}
	for i := 0; i < len(needle); i++ {
		c, name = nextHFS(name)
		if c > 127 || lower(byte(c)) != needle[i] {
			return false
		}
	}
	c, _ = nextHFS(name)
	return c == 0 || c == '/'
}

// nextHFS decodes the next character of name that HFS+ does not ignore; 0
// at the end of name or at a byte sequence that is not valid UTF-8.
func nextHFS(name []byte) (rune, []byte) {
	for {
		c, n := utf8Char(name)
		if n == 0 {
			return 0, nil
		}
		name = name[n:]
		switch {
		case c >= 0x200c && c <= 0x200f, c >= 0x202a && c <= 0x202e, c >= 0x206a && c <= 0x206f, c == 0xfeff:
			continue
		}
		return c, name
	}
}

// utf8Char decodes one UTF-8 character with git's validity rules (no
// overlong forms, no surrogates, no U+FFFE/U+FFFF, nothing past U+10FFFF);
// n is 0 at the end of s or on an invalid sequence.
func utf8Char(s []byte) (rune, int) {
	if len(s) == 0 {
		return 0, 0
	}
	cont := func(i int) bool { return i < len(s) && s[i]&0xc0 == 0x80 }
	b := s[0]
	switch {
	case b < 0x80:
		return rune(b), 1
	case b&0xe0 == 0xc0:
		if !cont(1) || b&0xfe == 0xc0 {
			return 0, 0
		}
		return rune(b&0x1f)<<6 | rune(s[1]&0x3f), 2
	case b&0xf0 == 0xe0:
		if !cont(1) || !cont(2) ||
			(b == 0xe0 && s[1]&0xe0 == 0x80) ||
			(b == 0xed && s[1]&0xe0 == 0xa0) ||
			(b == 0xef && s[1] == 0xbf && s[2]&0xfe == 0xbe) {
			return 0, 0
		}
		return rune(b&0x0f)<<12 | rune(s[1]&0x3f)<<6 | rune(s[2]&0x3f), 3
	case b&0xf8 == 0xf0:
		if !cont(1) || !cont(2) || !cont(3) ||
			(b == 0xf0 && s[1]&0xf0 == 0x80) ||
			(b == 0xf4 && s[1] > 0x8f) || b > 0xf4 {
			return 0, 0
		}
		return rune(b&0x07)<<18 | rune(s[1]&0x3f)<<12 | rune(s[2]&0x3f)<<6 | rune(s[3]&0x3f), 4
	}
	return 0, 0
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// at returns s[i], or 0 past its end (names read as C strings).
func at(s []byte, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// ntfsTail reports whether s[i:] is only spaces and dots up to its end or
// an NTFS separator ('\\', '/', ':' which starts an alternate data stream).
func ntfsTail(s []byte, i int) bool {
	for ; ; i++ {
		switch at(s, i) {
		case 0, '\\', '/', ':':
			return true
		case ' ', '.':
		default:
			return false
		}
	}
}

// isNTFSDotGit reports whether NTFS would take name for ".git": ".git" or
// its 8.3 short name "git~1", in any case, followed by nothing but spaces
// and dots (which NTFS drops) up to the end or a separator.
func isNTFSDotGit(name []byte) bool {
	switch {
	case at(name, 0) == '.' && lower(at(name, 1)) == 'g' && lower(at(name, 2)) == 'i' && lower(at(name, 3)) == 't':
		return ntfsTail(name, 4)
	case lower(at(name, 0)) == 'g' && lower(at(name, 1)) == 'i' && lower(at(name, 2)) == 't' && at(name, 3) == '~' && at(name, 4) == '1':
		return ntfsTail(name, 5)
	}
	return false
}

// isNTFSDot reports whether NTFS could take name for "." + long (long
// lower-case ASCII of 6 or more characters): the name itself in any case,
// its 8.3 short names (the first six characters, '~' and 1 to 4), or a
// fall-back short name (a prefix of short, then '~' and digits, eight
// characters in all), each followed by spaces and dots only.
func isNTFSDot(name []byte, long, short string) bool {
	if at(name, 0) == '.' && len(name) > len(long) && equalFold(name[1:1+len(long)], long) {
		return ntfsTail(name, 1+len(long))
	}
	if len(name) >= 8 && equalFold(name[:6], long[:6]) && name[6] == '~' && name[7] >= '1' && name[7] <= '4' {
		return ntfsTail(name, 8)
	}
	sawTilde := false
	for i := 0; i < 8; i++ {
		c := at(name, i)
		switch {
		case c == 0:
			return false
		case sawTilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if c := at(name, i); c < '1' || c > '9' {
				return false
			}
			sawTilde = true
		case i >= 6, c&0x80 != 0, lower(c) != short[i]:
			return false
		}
	}
	return ntfsTail(name, 8)
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}
