package serve

// Member tokens for HTTP (docs/serving.md "Tokens"), issued and revoked by
// `git+ member token`.
//
// Decisions:
//   - A token is "gpt_" and 32 random bytes in unpadded base64url. It is
//     shown once; the git directory keeps only its SHA-256, in
//     gitplus/tokens.json, with the member's name and the key the member
//     held at issue time.
//   - A token is bound to its member's key event (keyevent.go): the trust
//     event that gave the member the key it held at issue time. It
//     authenticates only while the member exists with that key and that
//     key event, so removing a member or changing its key voids its tokens
//     for good, without touching the file: adding the member again with the
//     same key, or changing the key back, makes a new key event. A
//     capability change keeps the key event; what the member may push is
//     the hook's question (the trust at the push), so revoking a
//     capability is immediate too.
//   - A record without a key event (issued by a git+ before tokens were
//     bound) authenticates nothing: whether its member was removed and
//     added again since cannot be told, so it is refused, and the member
//     needs a new token (docs/serving.md "Tokens").
//   - The file is rewritten whole (temporary file, rename) under an
//     exclusive lock file, so concurrent issues and revocations do not
//     lose each other; the server reads it on every authenticated request.
//   - Issuing and revoking need write access to the git directory, not a
//     signing key: they run on the server, as its operator.

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// TokensFile is where a repository's token hashes live, under its git dir.
const TokensFile = "gitplus/tokens.json"

// TokenPrefix begins every token.
const TokenPrefix = "gpt_"

// TokenRecord is one issued token as the git directory keeps it.
type TokenRecord struct {
	ID   string `json:"id"`   // the first 12 hex digits of Hash: names the token in list and revoke
	Name string `json:"name"` // the member
	Key  string `json:"key"`  // the member's key when issued (authorized_keys line)
	// KeyEvent is the id of the trust event that gave the member Key
	// (KeyEvents); "" in a record written before tokens were bound, which
	// then authenticates nothing.
	KeyEvent string `json:"keyEvent,omitempty"`
	Hash     string `json:"sha256"`
	Created  string `json:"created"`
}

// Tokens is the content of TokensFile.
type Tokens struct {
	Tokens []TokenRecord `json:"tokens"`
}

// TokenHash is the hex SHA-256 of a token, as TokensFile keeps it.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// LoadTokens reads the token file of gitDir (none: no tokens).
func LoadTokens(gitDir string) (Tokens, error) {
	var ts Tokens
	p := filepath.Join(gitDir, filepath.FromSlash(TokensFile))
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return ts, nil
	}
	if err != nil {
		return ts, fmt.Errorf("reading %s: %w", p, err)
	}
	if err := json.Unmarshal(data, &ts); err != nil {
		return ts, fmt.Errorf("%s is not a token file (%v): fix or remove it, then issue the tokens again", p, err)
	}
	return ts, nil
}

// UpdateTokens changes the token file of gitDir under its lock.
func UpdateTokens(gitDir string, change func(*Tokens) error) error {
	p := filepath.Join(gitDir, filepath.FromSlash(TokensFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
	}
	lock := p + ".lock"
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			break
		}
		if !errors.Is(err, os.ErrExist) || time.Now().After(deadline) {
			return fmt.Errorf("locking %s (%v): if no other git+ is changing tokens, remove %s", p, err, lock)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer os.Remove(lock)
	ts, err := LoadTokens(gitDir)
	if err != nil {
		return err
	}
	if err := change(&ts); err != nil {
		return err
	}
	data, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}

// CheckToken returns the member a token authenticates in st, whose key
// events are since (KeyEvents): the record's member must exist with the
// key it held when the token was issued, given by the same trust event.
func CheckToken(ts Tokens, st *trust.State, since map[string]string, name, token string) (*trust.Member, bool) {
	if !strings.HasPrefix(token, TokenPrefix) {
		return nil, false
	}
	h := TokenHash(token)
	for _, r := range ts.Tokens {
		if r.Name != name || subtle.ConstantTimeCompare([]byte(r.Hash), []byte(h)) != 1 {
			continue
		}
		m, ok := st.Members[name]
		if !ok || m.KeyLine != r.Key || r.KeyEvent == "" || since[name] != r.KeyEvent {
			return nil, false
		}
		return m, true
	}
	return nil, false
}

// IssueToken makes a new token for member name of the git+ repository
// gitDir and records its hash. The token itself is returned once and kept
// nowhere.
func IssueToken(gitDir, name string, now time.Time) (token string, rec TokenRecord, m *trust.Member, err error) {
	st, since, err := KeyEvents(gitDir)
	if err != nil {
		return "", rec, nil, err
	}
	m, ok := st.Members[name]
	if !ok {
		return "", rec, nil, fmt.Errorf("%q is not a member of %s: add it first (git+ member add %s --key FILE --cap source.push)", name, gitDir, name)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", rec, nil, fmt.Errorf("generating a token: %w", err)
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	hash := TokenHash(token)
	rec = TokenRecord{ID: hash[:12], Name: name, Key: m.KeyLine, KeyEvent: since[name], Hash: hash, Created: now.UTC().Format(time.RFC3339)}
	if err := UpdateTokens(gitDir, func(ts *Tokens) error {
		ts.Tokens = append(ts.Tokens, rec)
		return nil
	}); err != nil {
		return "", rec, nil, err
	}
	return token, rec, m, nil
}

// ErrNoToken: a revocation that matched no token.
var ErrNoToken = errors.New("no such token")

// noTokenError says which token was not found, in the words of the verb.
type noTokenError struct{ what, gitDir string }

func (e noTokenError) Error() string {
	return fmt.Sprintf("%s in %s; see git+ member token list", e.what, e.gitDir)
}
func (e noTokenError) Unwrap() error { return ErrNoToken }

// RevokeTokens removes every token of member name in gitDir, or only the
// one with id when id is not empty, and returns how many it removed. None
// is an error wrapping ErrNoToken.
func RevokeTokens(gitDir, name, id string) (int, error) {
	n := 0
	if err := UpdateTokens(gitDir, func(ts *Tokens) error {
		kept := ts.Tokens[:0]
		for _, r := range ts.Tokens {
			if r.Name == name && (id == "" || r.ID == id) {
				n++
				continue
			}
			kept = append(kept, r)
		}
		ts.Tokens = kept
		return nil
	}); err != nil {
		return 0, err
	}
	if n == 0 {
		what := "no token of " + name
		if id != "" {
			what = fmt.Sprintf("no token %s of %s", id, name)
		}
		return 0, noTokenError{what, gitDir}
	}
	return n, nil
}

// ListTokens returns the token records of gitDir, ordered by member name.
func ListTokens(gitDir string) ([]TokenRecord, error) {
	ts, err := LoadTokens(gitDir)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(ts.Tokens, func(i, j int) bool { return ts.Tokens[i].Name < ts.Tokens[j].Name })
	return ts.Tokens, nil
}
