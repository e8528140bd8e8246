package gitio

// Reading a repository's own config file without starting git, for the
// pre-receive hook (docs/serving.md "Identity from the host").
//
// Decisions:
//   - Only the file named is read (the repository's $GIT_DIR/config): no
//     system or global file, no include.path or includeIf. The keys the
//     hook reads (gitplus.*) are the repository operator's and belong in
//     that file; `git config` without --global writes them there.
//   - The syntax read is git's: [section] and [section "subsection"]
//     headers (section names case-insensitive, subsections case-sensitive;
//     the old [section.subsection] form is lowered as git lowers it),
//     "name = value" or a bare "name" (true), names case-insensitive,
//     values with double quotes, the escapes \" \\ \n \t \b, a trailing
//     backslash continuing the line, and comments after an unquoted # or ;.
//   - A line that does not parse makes ReadConfig fail, naming the file and
//     line: the hook then refuses (fail closed) rather than guess.

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrConfig reports a config file that does not parse.
var ErrConfig = errors.New("malformed git config")

// ConfigEntry is one "name = value" of a config file. Key is
// "section.name" or "section.subsection.name", with section and name
// lowercased and the subsection as written.
type ConfigEntry struct {
	Key, Value string
}

// Config is a config file's entries in file order.
type Config []ConfigEntry

// All returns every value of key (lowercase section and name), in order.
func (c Config) All(key string) []string {
	var out []string
	for _, e := range c {
		if e.Key == key {
			out = append(out, e.Value)
		}
	}
	return out
}

// Get returns the last value of key, as git config --get does.
func (c Config) Get(key string) (string, bool) {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].Key == key {
			return c[i].Value, true
		}
	}
	return "", false
}

// Bool reads key as git reads a boolean; absent or unreadable is false.
func (c Config) Bool(key string) bool {
	v, ok := c.Get(key)
	if !ok {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

// ReadConfig reads the config file at path. A missing file is an empty
// config.
func ReadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses a config file's bytes.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	section := ""
	text := string(data)
	next := func() (string, bool) {
		if text == "" {
			return "", false
		}
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		return strings.TrimRight(line, "\r"), true
	}
	n := 0
	for {
		line, ok := next()
		if !ok {
			break
		}
		n++
		// A value may continue on the next line after a trailing backslash
		// outside quotes; join first, then parse.
		for continued(line) {
			more, ok := next()
			if !ok {
				break
			}
			n++
			line = line[:len(line)-1] + more
		}
		rest := strings.TrimLeft(line, " \t")
		if rest == "" || rest[0] == '#' || rest[0] == ';' {
			continue
		}
		if rest[0] == '[' {
			s, after, err := parseHeader(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d %q: %w: %w", n, line, err, ErrConfig)
			}
			section = s
			rest = strings.TrimLeft(after, " \t")
			if rest == "" || rest[0] == '#' || rest[0] == ';' {
				continue
			}
		}
		if section == "" {
			return nil, fmt.Errorf("line %d %q: a variable outside any section: %w", n, line, ErrConfig)
		}
		name, value, err := parseVariable(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %w: %w", n, line, err, ErrConfig)
		}
		c = append(c, ConfigEntry{Key: section + "." + name, Value: value})
	}
	return c, nil
}

// continued reports whether line ends in a backslash that continues it:
// outside quotes and not itself escaped, and not inside a comment.
func continued(line string) bool {
	inQuote, esc := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case esc:
			esc = false
		case ch == '\\':
			if i == len(line)-1 {
				return true
			}
			esc = true
		case ch == '"':
			inQuote = !inQuote
		case (ch == '#' || ch == ';') && !inQuote:
			return false
		}
	}
	return false
}

// parseHeader reads "[section]" or "[section "sub"]" and returns the
// section key prefix and what follows the closing bracket.
func parseHeader(s string) (string, string, error) {
	end := -1
	inQuote, esc := false, false
	for i := 1; i < len(s); i++ {
		ch := s[i]
		if esc {
			esc = false
			continue
		}
		if inQuote && ch == '\\' {
			esc = true
			continue
		}
		if ch == '"' {
			inQuote = !inQuote
			continue
		}
		if ch == ']' && !inQuote {
			end = i
			break
		}
	}
	if end < 0 {
		return "", "", errors.New("a section header without its ]")
	}
	inner := s[1:end]
	name, sub, hasSub := strings.Cut(inner, " ")
	if !hasSub {
		// [section] or the deprecated [section.subsection], both lowered.
		if inner == "" || !validName(strings.ReplaceAll(inner, ".", "")) {
			return "", "", fmt.Errorf("section name %q", inner)
		}
		return strings.ToLower(inner), s[end+1:], nil
	}
	if !validName(name) {
		return "", "", fmt.Errorf("section name %q", name)
	}
	sub = strings.TrimLeft(sub, " \t")
	if len(sub) < 2 || sub[0] != '"' || sub[len(sub)-1] != '"' {
		return "", "", fmt.Errorf("subsection %q is not quoted", sub)
	}
	var b strings.Builder
	for i := 1; i < len(sub)-1; i++ {
		if sub[i] == '\\' && i+1 < len(sub)-1 {
			i++
		}
		b.WriteByte(sub[i])
	}
	return strings.ToLower(name) + "." + b.String(), s[end+1:], nil
}

// validName: letters, digits, '-' and '.' (sections), starting anywhere
// git allows; enough to reject a garbled line.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '.') {
			return false
		}
	}
	return true
}

// parseVariable reads "name = value", "name=value" or "name".
func parseVariable(s string) (string, string, error) {
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9' || s[i] == '-') {
		i++
	}
	name := s[:i]
	if name == "" || !(name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
		return "", "", fmt.Errorf("variable name %q", name)
	}
	rest := strings.TrimLeft(s[i:], " \t")
	if rest == "" || rest[0] == '#' || rest[0] == ';' {
		return strings.ToLower(name), "true", nil
	}
	if rest[0] != '=' {
		return "", "", fmt.Errorf("no = after %q", name)
	}
	v, err := parseValue(rest[1:])
	return strings.ToLower(name), v, err
}

// parseValue reads a value: surrounding blanks dropped, quoted parts kept
// as written, escapes decoded, a comment ending it.
func parseValue(s string) (string, error) {
	var b strings.Builder
	inQuote := false
	pending := "" // blanks kept only when more value follows
	started := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case !inQuote && (ch == ' ' || ch == '\t'):
			if started {
				pending += string(ch)
			}
			continue
		case !inQuote && (ch == '#' || ch == ';'):
			return b.String(), nil
		case ch == '"':
			b.WriteString(pending)
			inQuote = !inQuote
		case ch == '\\':
			if i+1 >= len(s) {
				return "", errors.New("a backslash at the end of the value")
			}
			i++
			switch s[i] {
			case '"', '\\':
				b.WriteString(pending)
				b.WriteByte(s[i])
			case 'n':
				b.WriteString(pending + "\n")
			case 't':
				b.WriteString(pending + "\t")
			case 'b':
				b.WriteString(pending + "\b")
			default:
				return "", fmt.Errorf("unknown escape \\%c", s[i])
			}
			pending, started = "", true
			continue
		default:
			b.WriteString(pending)
			b.WriteByte(ch)
		}
		pending, started = "", true
	}
	if inQuote {
		return "", errors.New("an unterminated quote")
	}
	return b.String(), nil
}
