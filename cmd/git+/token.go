package main

// git+ member token {issue,revoke,list}: per-member HTTP tokens for
// git+ serve (docs/serving.md "Tokens").
//
// Decisions:
//   - A token is "gpt_" and 32 random bytes in unpadded base64url. It is
//     printed once; the git directory keeps only its SHA-256, in
//     gitplus/tokens.json, with the member's name and the key the member
//     held at issue time.
//   - A token authenticates only while its member exists with that same
//     key: removing a member or changing its key voids its tokens without
//     touching the file. What the member may push is the hook's question
//     (the trust at the push), so revoking a capability is immediate too.
//   - The file is rewritten whole (temporary file, rename) under an
//     exclusive lock file, so concurrent issues and revocations do not
//     lose each other; git+ serve reads it on every authenticated request.
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

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// tokensFile is where a repository's token hashes live, under its git dir.
const tokensFile = "gitplus/tokens.json"

const tokenPrefix = "gpt_"

type tokenRecord struct {
	ID      string `json:"id"`   // the first 12 hex digits of Hash: names the token in list and revoke
	Name    string `json:"name"` // the member
	Key     string `json:"key"`  // the member's key when issued (authorized_keys line)
	Hash    string `json:"sha256"`
	Created string `json:"created"`
}

type tokenSet struct {
	Tokens []tokenRecord `json:"tokens"`
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func loadTokens(gitDir string) (tokenSet, error) {
	var ts tokenSet
	p := filepath.Join(gitDir, filepath.FromSlash(tokensFile))
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

// updateTokens changes the token file under its lock.
func updateTokens(gitDir string, change func(*tokenSet) error) error {
	p := filepath.Join(gitDir, filepath.FromSlash(tokensFile))
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
	ts, err := loadTokens(gitDir)
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

// checkToken returns the member a token authenticates in st: the record's
// member must exist with the key it held when the token was issued.
func checkToken(ts tokenSet, st *trust.State, name, token string) (*trust.Member, bool) {
	if !strings.HasPrefix(token, tokenPrefix) {
		return nil, false
	}
	h := tokenHash(token)
	for _, r := range ts.Tokens {
		if r.Name != name || subtle.ConstantTimeCompare([]byte(r.Hash), []byte(h)) != 1 {
			continue
		}
		m, ok := st.Members[name]
		if !ok || m.KeyLine != r.Key {
			return nil, false
		}
		return m, true
	}
	return nil, false
}

func memberTokenCommand() *cli.Command {
	return &cli.Command{
		Name:      "token",
		Usage:     "issue, revoke and list a member's HTTP tokens for git+ serve (git+ member token issue|revoke|list)",
		ArgsUsage: "issue NAME | revoke NAME [--id ID] | list",
		Subcommands: []*cli.Command{
			{
				Name:      "issue",
				Usage:     "print a new token for member NAME (once; only its hash is kept)",
				ArgsUsage: "NAME",
				Action:    tokenIssue,
			},
			{
				Name:      "revoke",
				Usage:     "revoke every token of member NAME, or only --id ID",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "id", Usage: "revoke only this token (its id from git+ member token list)"}},
				Action:    tokenRevoke,
			},
			{
				Name:   "list",
				Usage:  "list the tokens: member, id, issue time",
				Action: tokenList,
			},
		},
	}
}

func tokenGitDir(c *cli.Context) (string, error) {
	gitDir, _, err := findGitDir(rootString(c, "repo"))
	return gitDir, err
}

func tokenIssue(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr("usage: git+ member token issue NAME")
	}
	name := c.Args().First()
	gitDir, err := tokenGitDir(c)
	if err != nil {
		return fail(1, err)
	}
	h, err := openLocal(gitDir)
	if err != nil {
		return fail(1, err)
	}
	st, err := h.Trust()
	if err != nil {
		return fail(1, err)
	}
	m, ok := st.Members[name]
	if !ok {
		return fail(1, fmt.Errorf("%q is not a member of %s: add it first (git+ member add %s --key FILE --cap source.push)", name, gitDir, name))
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fail(1, fmt.Errorf("generating a token: %w", err))
	}
	token := tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	hash := tokenHash(token)
	rec := tokenRecord{ID: hash[:12], Name: name, Key: m.KeyLine, Hash: hash, Created: time.Now().UTC().Format(time.RFC3339)}
	if err := updateTokens(gitDir, func(ts *tokenSet) error {
		ts.Tokens = append(ts.Tokens, rec)
		return nil
	}); err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "issued token %s for %s (%s) in %s: use it as the HTTP password with user name %s; it is not shown again\n",
		rec.ID, name, hubrefs.Fingerprint(m.Key), gitDir, name)
	fmt.Fprintln(c.App.Writer, token)
	return nil
}

func tokenRevoke(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr("usage: git+ member token revoke NAME [--id ID]")
	}
	name, id := c.Args().First(), c.String("id")
	gitDir, err := tokenGitDir(c)
	if err != nil {
		return fail(1, err)
	}
	n := 0
	if err := updateTokens(gitDir, func(ts *tokenSet) error {
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
		return fail(1, err)
	}
	if n == 0 {
		what := "no token of " + name
		if id != "" {
			what = fmt.Sprintf("no token %s of %s", id, name)
		}
		return fail(1, fmt.Errorf("%s in %s; see git+ member token list", what, gitDir))
	}
	fmt.Fprintf(c.App.ErrWriter, "revoked %d token(s) of %s in %s\n", n, name, gitDir)
	return nil
}

func tokenList(c *cli.Context) error {
	gitDir, err := tokenGitDir(c)
	if err != nil {
		return fail(1, err)
	}
	ts, err := loadTokens(gitDir)
	if err != nil {
		return fail(1, err)
	}
	sort.SliceStable(ts.Tokens, func(i, j int) bool { return ts.Tokens[i].Name < ts.Tokens[j].Name })
	for _, r := range ts.Tokens {
		fmt.Fprintf(c.App.Writer, "%s\t%s\t%s\n", r.Name, r.ID, r.Created)
	}
	return nil
}
