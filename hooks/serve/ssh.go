package serve

// SSH (docs/serving.md "SSH"): the same repositories as the HTTP side.
//
// gitkit's SSH server is not used as is: its session handler copies the
// command's standard output to the end before it reads standard error (a
// hook that writes more than a pipe's buffer to stderr blocks receive-pack
// forever, and stderr lines arrive after the protocol they explain), always
// reports exit status 0 (a failing command looks like success), runs any
// client "env" request as a command, and checks keys before it knows which
// repository the client addresses. This file keeps gitkit's model — a
// golang.org/x/crypto/ssh server, the git command in the exec request, the
// authenticated key id in GITKIT_KEY — and replaces the handler:
//
//   - Authentication: a public key is accepted when it is a member key of
//     at least one git+ repository under the root (a key that is nobody's
//     fails authentication). At exec time the key must be a member of the
//     repository addressed; otherwise the command fails with a message.
//     On a private server that message is the same for a repository that
//     does not exist, so a key learns nothing of repositories it is no
//     member of.
//   - Only "git-upload-pack 'PATH'" and "git-receive-pack 'PATH'" (also
//     spelled "git upload-pack") are run; PATH is resolved under the root as
//     the HTTP side does, a ".." segment refused. The only env request
//     honoured is GIT_PROTOCOL (git's protocol version negotiation).
//   - The command's standard output and standard error are copied
//     concurrently to the channel and its stderr stream; the exit status
//     sent is the command's own, after both are drained.
//   - GITKIT_KEY is the member key's authorized_keys line ("ssh-ed25519
//     AAAA..."), the key id the hook reads; GITPLUS_SERVED=1.
//   - The host key (ed25519) is created at the host key path if missing
//     (mode 0600, with a .pub beside it) and reused across restarts, so
//     clients' known_hosts stay valid.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
)

// SSH is the SSH front end of a Server, listening.
type SSH struct {
	s           *Server
	ln          net.Listener
	config      *ssh.ServerConfig
	Fingerprint string // the host key's SHA256 fingerprint
	wg          sync.WaitGroup
}

// loadHostKey reads the host key at path, creating it first if missing.
func loadHostKey(path string) (ssh.Signer, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generating the SSH host key: %w", err)
		}
		block, err := ssh.MarshalPrivateKey(priv, "git+ serve host key")
		if err != nil {
			return nil, err
		}
		data = pem.EncodeToMemory(block)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("creating the directory of the SSH host key %s: %w", path, err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("writing the SSH host key %s: %w", path, err)
		}
		_, err1 := f.Write(data)
		err2 := f.Close()
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("writing the SSH host key %s: %w", path, err)
		}
		signer, err := ssh.NewSignerFromKey(priv)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(path+".pub", ssh.MarshalAuthorizedKey(signer.PublicKey()), 0o644); err != nil {
			return nil, fmt.Errorf("writing %s.pub: %w", path, err)
		}
		return signer, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the SSH host key %s: %w", path, err)
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("the SSH host key %s does not parse (%v): use an unencrypted OpenSSH private key, or remove it to have one made", path, err)
	}
	return signer, nil
}

// ListenSSH loads (or creates) the host key at keyPath and listens for SSH
// on addr; Serve then answers connections.
func (s *Server) ListenSSH(keyPath, addr string) (*SSH, error) {
	host, err := loadHostKey(keyPath)
	if err != nil {
		return nil, err
	}
	f := &SSH{s: s, Fingerprint: ssh.FingerprintSHA256(host.PublicKey())}
	f.config = &ssh.ServerConfig{
		ServerVersion:     "SSH-2.0-gitplus",
		PublicKeyCallback: f.authenticate,
	}
	f.config.AddHostKey(host)
	if f.ln, err = net.Listen("tcp", addr); err != nil {
		return nil, fmt.Errorf("listening on %s for SSH: %w (pick a free address with --ssh)", addr, err)
	}
	return f, nil
}

// authenticate accepts a member key of any git+ repository under the root.
// A refused key is logged with its fingerprint, the client's address and
// the reason (a client offers its keys one by one: one line each).
func (f *SSH) authenticate(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	repos, err := FindRepos(f.s.Root)
	if err != nil {
		f.s.logf("ssh: refused key %s (%s) from %s: %v", ssh.FingerprintSHA256(key), key.Type(), meta.RemoteAddr(), err)
		return nil, err
	}
	for _, d := range repos {
		if !HasTrust(d) {
			continue
		}
		st, err := TrustOf(d)
		if err != nil {
			f.s.logf("ssh: key %s: the members of %s cannot be read: %v", ssh.FingerprintSHA256(key), d, err)
			continue
		}
		if _, ok := st.MemberByKey(key); ok {
			return &ssh.Permissions{Extensions: map[string]string{"key": hubrefs.AuthorizedKey(key)}}, nil
		}
	}
	f.s.logf("ssh: refused key %s (%s) from %s: it is not a member key of any git+ repository here (add it with git+ member add)", ssh.FingerprintSHA256(key), key.Type(), meta.RemoteAddr())
	return nil, fmt.Errorf("key %s is not a member key of any repository here", ssh.FingerprintSHA256(key))
}

// Addr is the address the SSH side listens on.
func (f *SSH) Addr() net.Addr { return f.ln.Addr() }

// Serve answers SSH connections until Shutdown.
func (f *SSH) Serve() error {
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.handle(conn)
		}()
	}
}

// Shutdown stops accepting and waits for running sessions (bounded by ctx).
func (f *SSH) Shutdown(ctx context.Context) {
	f.ln.Close()
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (f *SSH) handle(conn net.Conn) {
	sc, chans, reqs, err := ssh.NewServerConn(conn, f.config)
	if err != nil {
		conn.Close()
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	key := sc.Permissions.Extensions["key"]
	var wg sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.session(ch, creqs, key)
		}()
	}
	wg.Wait()
}

var sshCommandRE = regexp.MustCompile(`^git[ -](upload-pack|receive-pack) '(.*)'$`)

// unquoteSQ undoes git's shell quoting of a path: 'a'\”b' is a'b.
func unquoteSQ(s string) (string, bool) {
	s = strings.ReplaceAll(s, `'\''`, "\x00")
	s = strings.ReplaceAll(s, `'\!'`, "!")
	if strings.Contains(s, "'") {
		return "", false
	}
	return strings.ReplaceAll(s, "\x00", "'"), true
}

// exitStatus sends the exit-status request and closes the channel.
func exitStatus(ch ssh.Channel, code int) {
	ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
	ch.Close()
}

func (f *SSH) session(ch ssh.Channel, reqs <-chan *ssh.Request, key string) {
	var protocol string
	for req := range reqs {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			if ssh.Unmarshal(req.Payload, &kv) == nil && kv.Name == "GIT_PROTOCOL" && regexp.MustCompile(`^[a-zA-Z0-9=:.,_-]*$`).MatchString(kv.Value) {
				protocol = kv.Value
				req.Reply(true, nil)
				continue
			}
			req.Reply(false, nil)
		case "exec":
			var p struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &p); err != nil {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			// Requests that arrive while the command runs (keepalives)
			// must still be answered, or the connection stalls.
			go func() {
				for r := range reqs {
					r.Reply(false, nil)
				}
			}()
			f.exec(ch, p.Command, key, protocol)
			return
		case "shell", "pty-req":
			req.Reply(false, nil)
			if req.Type == "shell" {
				fmt.Fprintf(ch.Stderr(), "git+: this server runs git only (git clone/fetch/push ssh://...); there is no shell\r\n")
				exitStatus(ch, 1)
				return
			}
		default:
			req.Reply(false, nil)
		}
	}
	ch.Close()
}

func (f *SSH) exec(ch ssh.Channel, command, key, protocol string) {
	refuse := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		fp := "(unparsable)"
		if pub, _, err := hubrefs.ParseAuthorizedKeyLine(key); err == nil {
			fp = hubrefs.Fingerprint(pub)
		}
		f.s.logf("ssh: refused %q for key %s: %s", command, fp, msg)
		fmt.Fprintf(ch.Stderr(), "git+: %s\n", msg)
		exitStatus(ch, 1)
	}
	m := sshCommandRE.FindStringSubmatch(command)
	if m == nil {
		refuse("%q is not a git command this server runs (git-upload-pack or git-receive-pack 'PATH')", command)
		return
	}
	rel, ok := unquoteSQ(m[2])
	if !ok {
		refuse("the path in %q is not quoted as git quotes it", command)
		return
	}
	rel = strings.TrimPrefix(rel, "~/")
	pub, _, err := hubrefs.ParseAuthorizedKeyLine(key)
	if err != nil {
		refuse("the authenticated key does not parse: %v", err)
		return
	}
	// A private server says the same to a key that is no member of an
	// existing repository and to any key naming a missing one, so that
	// nobody learns which repositories exist without being a member
	// (docs/serving.md "SSH").
	notYours := func() {
		refuse("%q is not a git+ repository here, or key %s is not a member of it", strings.Trim(rel, "/"), hubrefs.Fingerprint(pub))
	}
	dir, err := f.s.Repo(rel)
	switch {
	case errors.Is(err, ErrEscape):
		refuse("%v: name a repository under the served root, without ..", err)
		return
	case errors.Is(err, ErrNoRepo) && f.s.Private:
		notYours()
		return
	case errors.Is(err, ErrNoRepo):
		refuse("%q is not a git+ repository here", strings.Trim(rel, "/"))
		return
	case err != nil:
		refuse("%v", err)
		return
	}
	st, err := TrustOf(dir)
	if err != nil {
		refuse("%v", err)
		return
	}
	if _, ok := st.MemberByKey(pub); !ok && f.s.Private {
		notYours()
		return
	} else if !ok {
		refuse("key %s is not a member of %s; ask its admin to add it (git+ member add)", hubrefs.Fingerprint(pub), strings.Trim(rel, "/"))
		return
	}
	extra := []string{receive.EnvSSHKey + "=" + key}
	if protocol != "" {
		extra = append(extra, "GIT_PROTOCOL="+protocol)
	}
	cmd := exec.Command("git", m[1], dir)
	cmd.Env = gitEnv(extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err1 := cmd.StdinPipe()
	stdout, err2 := cmd.StdoutPipe()
	stderr, err3 := cmd.StderrPipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		refuse("%v", err)
		return
	}
	if err := cmd.Start(); err != nil {
		refuse("starting git %s: %v", m[1], err)
		return
	}
	go func() {
		io.Copy(stdin, ch)
		stdin.Close()
	}()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); io.Copy(ch, stdout) }()
	go func() { defer wg.Done(); io.Copy(ch.Stderr(), stderr) }()
	wg.Wait()
	code := 0
	if err := cmd.Wait(); err != nil {
		code = 1
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		}
	}
	ch.CloseWrite()
	exitStatus(ch, code)
}
