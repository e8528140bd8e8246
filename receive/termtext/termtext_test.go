package termtext

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// unescape reads text as the package comment says a reader does, left to
// right: \\ is a backslash, \ and one of a b f r v x u begins an escape, any
// other \ is a backslash. It fails on an escape that Escape never writes.
func unescape(t testing.TB, s string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; c {
		case '\\':
			b.WriteByte('\\')
			i++
		case 'a', 'b', 'f', 'r', 'v':
			b.WriteByte(map[byte]byte{'a': 7, 'b': 8, 'f': 12, 'r': 13, 'v': 11}[c])
			i++
		case 'x':
			v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				t.Fatalf("bad \\x escape at %d in %q", i, s)
			}
			b.WriteByte(byte(v))
			i += 3
		case 'u':
			v, err := strconv.ParseUint(s[i+2:i+6], 16, 32)
			if err != nil {
				t.Fatalf("bad \\u escape at %d in %q", i, s)
			}
			b.WriteRune(rune(v))
			i += 5
		default:
			b.WriteByte('\\')
		}
	}
	return b.String()
}

// raw reports a byte or character in s that a terminal would act on.
func raw(s string) (string, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return s[i : i+1], true
			}
		}
		if !Shown(r) {
			return string(r), true
		}
	}
	return "", false
}

func TestEscapeTable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain title", "plain title"},
		{"a\nb\tc", "a\nb\tc"},
		{"\x1b[2Kapprovals: 2", `\x1b[2Kapprovals: 2`},
		{"fail\rsuccess", `fail\rsuccess`},
		{"\a\b\f\v\x00\x7f", `\a\b\f\v\x00\x7f`},
		{"\u009b31m", `\u009b31m`},
		{"\u202eevil\u2066", `\u202eevil\u2066`},
		{"bad \xff\xfe byte", `bad \xff\xfe byte`},
		{"é ü 日本 🚀", "é ü 日本 🚀"},
		// Backslashes: doubled only where they could begin an escape.
		{`C:\dir\d+`, `C:\dir\d+`},
		{`\x1b`, `\\x1b`},
		{`\\`, `\\\`},
		{`\`, `\`},
		{"\\\x1b", `\\\x1b`},
		{`\u202e`, `\\u202e`},
		{`say "\n"`, `say "\n"`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back := unescape(t, Escape(tc.in)); back != tc.in {
			t.Errorf("unescape(Escape(%q)) = %q", tc.in, back)
		}
	}
}

// checkOne holds the properties for one input: nothing a terminal acts on
// comes out, the text reads back as it was, a Writer fed in any pieces
// writes the same, and the JSON form decodes to the same value.
func checkOne(t *testing.T, s string, rng *rand.Rand) {
	t.Helper()
	e := Escape(s)
	if c, ok := raw(e); ok {
		t.Fatalf("Escape(%q) = %q keeps %q", s, e, c)
	}
	if back := unescape(t, e); back != s {
		t.Fatalf("Escape(%q) = %q reads back as %q", s, e, back)
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	for rest := []byte(s); len(rest) > 0; {
		n := 1 + rng.Intn(len(rest))
		w.Write(rest[:n])
		rest = rest[n:]
	}
	w.Flush()
	if out.String() != e {
		t.Fatalf("the Writer wrote %q for %q, Escape %q", out.String(), s, e)
	}
	doc, _ := json.Marshal(map[string]string{"s": s})
	safe := EscapeJSON(doc)
	if c, ok := raw(string(safe)); ok {
		t.Fatalf("EscapeJSON(%s) = %s keeps %q", doc, safe, c)
	}
	var a, b map[string]string
	if err := json.Unmarshal(doc, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(safe, &b); err != nil || a["s"] != b["s"] {
		t.Fatalf("EscapeJSON(%s) = %s decodes to %q (%v), want %q", doc, safe, b["s"], err, a["s"])
	}
}

func TestEscapeProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", " ", "\\", "x", "u", "r", "1", "b", "\n", "\t", "\r", "\x1b", "\x00", "\x7f",
		"\u0085", "\u009b", "\u202e", "\u2069", "é", "日", "🚀", "\xff", "\xe2", "\x82", "\xe2\x80"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.Intn(12); n > 0; n-- {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		checkOne(t, b.String(), rng)
	}
}

func TestPlain(t *testing.T) {
	for s, want := range map[string]bool{"a title": true, `back\slash`: true, "tab\t": true,
		"esc\x1b": false, "cr\r": false, "c1\u0085": false, "rlo\u202e": false, "bad\xff": false, "日本": true} {
		if got := Plain(s); got != want {
			t.Errorf("Plain(%q) = %v", s, got)
		}
	}
}

func TestWriterOnce(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	if NewWriter(w) != w {
		t.Fatal("NewWriter over a Writer made a second one: text would be escaped twice")
	}
	w.Write([]byte("\x1b \\"))
	if got := out.String(); got != `\x1b ` {
		t.Fatalf("before the next write: %q", got)
	}
	Raw(w).Write([]byte("\x1b"))
	if got := out.String(); got != "\\x1b \\\x1b" {
		t.Fatalf("Raw flushes, then writes beneath: %q", got)
	}
	w.SetJSON(true)
	w.Write([]byte(`{"a":"\\x"}` + "\x7f"))
	if got := out.String(); !strings.HasSuffix(got, `{"a":"\\x"}\u007f`) {
		t.Fatalf("JSON form: %q", got)
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1bb", `\x1b`, "\\\xe2\x80", "\u202e\\u", "\xff\\"} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, s string, seed int64) {
		checkOne(t, s, rand.New(rand.NewSource(seed)))
	})
}
