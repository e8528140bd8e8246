package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
)

// Key is a signing key with what is known of it.
type Key struct {
	Signer  hubrefs.Signer
	Comment string // from the .pub file or the agent; may be empty
	Source  string // the file or "ssh-agent"
}

// Fingerprint is a public key's SHA256 fingerprint.
func Fingerprint(k hubrefs.PublicKey) string { return hubrefs.Fingerprint(k) }

// LoadKey loads the signing key: the private key file path, or with path
// "" the first key in ssh-agent ($SSH_AUTH_SOCK).
func LoadKey(path string) (*Key, error) {
	if path != "" {
		s, err := sshsign.LoadKeyFile(path)
		if err != nil {
			return nil, fmt.Errorf("signing key %s: %w", path, err)
		}
		k := &Key{Signer: s, Source: path}
		if data, err := os.ReadFile(path + ".pub"); err == nil {
			if pub, comment, _, _, err := ssh.ParseAuthorizedKey(data); err == nil && hubrefs.SameKey(pub, s.PublicKey()) {
				k.Comment = comment
			}
		}
		return k, nil
	}
	sock, err := sshsign.AgentSocket(os.Getenv)
	if err != nil || sock == "" {
		return nil, errors.New("no signing key: pass --key FILE before the verb, set GITPLUS_KEY, or add a key to ssh-agent")
	}
	s, err := sshsign.AgentSigner(sock, nil)
	if err != nil {
		return nil, fmt.Errorf("no usable signing key in ssh-agent at %s (pass --key FILE or ssh-add a key): %w", sock, err)
	}
	k := &Key{Signer: s, Source: "ssh-agent"}
	if conn, err := net.Dial("unix", sock); err == nil {
		if keys, err := agent.NewClient(conn).List(); err == nil {
			for _, ak := range keys {
				if bytes.Equal(ak.Marshal(), s.PublicKey().Marshal()) {
					k.Comment = ak.Comment
					break
				}
			}
		}
		conn.Close()
	}
	return k, nil
}

// Authorized is k's public key as an authorized_keys line (what AddMember
// takes).
func (k *Key) Authorized() string { return hubrefs.AuthorizedKey(k.Signer.PublicKey()) }

// PushSigning is how git+'s own pushes (branches and event appends) sign their push
// certificate with k (docs/serving.md "git+ verbs identify themselves"):
// git signs through gpg.ssh.program pointed at the running binary, which
// answers `-Y sign` (hubrefs/sshsign.Keygen), with the key file or the
// agent key.
func (k *Key) PushSigning() *receive.PushSigning {
	if k == nil || k.Signer == nil {
		return nil
	}
	s := &receive.PushSigning{Key: "key::" + hubrefs.AuthorizedKey(k.Signer.PublicKey())}
	if k.Source != "" && k.Source != "ssh-agent" {
		if abs, err := filepath.Abs(k.Source); err == nil {
			s.Key = abs
		}
	}
	if exe, err := os.Executable(); err == nil {
		s.Program = exe
	}
	return s
}

// ReadKeyArg reads a public key given as an authorized_keys line or as a
// file (a .pub file, or a private key whose public half is taken), and
// returns it as a normalised authorized_keys line.
func ReadKeyArg(arg string) (string, error) {
	if arg == "" {
		return "", errors.New("empty --key: give an authorized_keys line or a key file")
	}
	line := arg
	if data, err := os.ReadFile(arg); err == nil {
		if signer, err := ssh.ParsePrivateKey(data); err == nil {
			return hubrefs.AuthorizedKey(signer.PublicKey()), nil
		}
		line = ""
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				line = l
				break
			}
		}
		_, norm, err := trust.ParseKey(line)
		if err != nil {
			return "", fmt.Errorf("malformed public key in file %s (want one authorized_keys line such as `ssh-ed25519 AAAA...`): %w", arg, err)
		}
		return norm, nil
	} else if !strings.Contains(arg, " ") && (strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".pub")) {
		return "", fmt.Errorf("key file %s: %w", arg, err)
	}
	_, norm, err := trust.ParseKey(line)
	if err != nil {
		return "", fmt.Errorf("malformed public key %q (want an authorized_keys line such as `ssh-ed25519 AAAA...` or a key file): %w", Clip(line), err)
	}
	return norm, nil
}

// MemberOf returns the member holding k, or an error naming the key's
// fingerprint and what to do.
func MemberOf(t *trust.State, k *Key) (*trust.Member, error) {
	m, ok := t.MemberByKey(k.Signer.PublicKey())
	if !ok {
		return nil, fmt.Errorf("key %s (%s) is not a member of this repository: ask an admin to run `git+ member add NAME --key '%s' --cap ...`",
			Fingerprint(k.Signer.PublicKey()), k.Source, hubrefs.AuthorizedKey(k.Signer.PublicKey()))
	}
	return m, nil
}

// NeedCap refuses early, with advice, when m lacks capability c.
func NeedCap(m *trust.Member, c string) error {
	if !m.Has(c) {
		return fmt.Errorf("member %s (key %s) lacks capability %s: ask an admin to run `git+ member change %s --add-cap %s`", m.Name, Fingerprint(m.Key), c, m.Name, c)
	}
	return nil
}

// Signing is where every writer starts: the repository, the trust folded
// now, the signing key and the member holding it.
type Signing struct {
	Repo   *Repo
	Trust  *trust.State
	Key    *Key
	Member *trust.Member
}

// OpenSigning folds r's trust and finds k's member; with caps, the member
// must hold each of them. A clone with no remote to write to is refused
// (ErrNoRemote).
func OpenSigning(r *Repo, k *Key, caps ...string) (*Signing, error) {
	if r.NoRemote {
		return nil, fmt.Errorf("%w: %s is a clone with no upstream remote for its current branch and no origin; pass --remote NAME|URL (or --remote . to write into this clone's own refs on purpose)", ErrNoRemote, r.GitDir)
	}
	t, err := r.Trust()
	if err != nil {
		return nil, err
	}
	m, err := MemberOf(t, k)
	if err != nil {
		return nil, err
	}
	for _, cp := range caps {
		if err := NeedCap(m, cp); err != nil {
			return nil, err
		}
	}
	return &Signing{Repo: r, Trust: t, Key: k, Member: m}, nil
}

// base is the common part of every payload this member writes.
func (s *Signing) base(typ string) hubrefs.Base { return hubrefs.Base{Type: typ, Repo: s.Trust.RepoID} }

// NewEvent builds the event as the fold will see it (without its id), so
// it can be judged before anything is written.
func NewEvent(payload any, parent plumbing.Hash, k *Key, now time.Time) (hubrefs.Event, error) {
	typ, body, err := hubrefs.MarshalPayload(payload)
	if err != nil {
		return hubrefs.Event{}, err
	}
	var b hubrefs.Base
	if err := json.Unmarshal(body, &b); err != nil {
		return hubrefs.Event{}, err
	}
	ev := hubrefs.Event{Type: typ, Repo: b.Repo, Payload: body, Time: now.Unix(), Signer: k.Signer.PublicKey()}
	if !parent.IsZero() {
		ev.Parents = []plumbing.Hash{parent}
	}
	return ev, nil
}

// Append pushes payload onto ref (through the repository's or the remote's
// receive hooks) and returns the new event id. It judges nothing itself:
// the writers below judge first and call it.
func (s *Signing) Append(ref string, payload any) (plumbing.Hash, error) {
	return s.appendWith(ref, payload, nil)
}

// appendWith is Append, with the payload built again for every attempt
// by rebuild when it is set (hubrefs.AppendOptions.Rebuild).
func (s *Signing) appendWith(ref string, payload any, rebuild func(context.Context) (any, error)) (plumbing.Hash, error) {
	r := s.Repo
	id, err := hubrefs.Append(context.Background(), hubrefs.AppendOptions{
		GitDir:   r.GitDir,
		Remote:   r.Remote,
		Ref:      ref,
		Payload:  payload,
		Rebuild:  rebuild,
		Signer:   s.Key.Signer,
		Name:     s.Member.Name,
		Ceilings: EventCeilings(s.Trust),
		Sign:     s.Key.PushSigning(),
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("appending to %s at %s: %w", ref, r.Where(), err)
	}
	if r.OnAppend != nil {
		typ, _, _ := hubrefs.MarshalPayload(payload)
		w := Written{Ref: ref, Type: typ, ID: id, Remote: r.Remote}
		if e, err := hubrefs.ReadEvent(r.objs, id, TrustCeilings); err == nil && len(e.Parents) > 0 {
			w.Parent = e.Parents[0]
		}
		r.OnAppend(w)
	}
	return id, nil
}
