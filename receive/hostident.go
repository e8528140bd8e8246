package receive

// Identity from the host: who pushes, when the push came through a host
// other than git+ serve that authenticated its users (gitolite over sshd,
// git http-backend behind a web server's authentication, GitLab, Gitea)
// and the repository's operator said so (docs/serving.md "Identity from
// the host").
//
// Decisions:
//   - Opt-in, in the repository's own config file ($GIT_DIR/config, read
//     by gitio.ReadConfig without starting git), never in pushed content:
//     gitplus.pusher names the source. Its values: ssh-auth-info (the keys
//     in the file OpenSSH's ExposeAuthInfo names in $SSH_USER_AUTH), or
//     env:NAME for NAME one of HostUserVars. Several values may be given;
//     the first source the push's environment carries counts.
//   - Only when the push carries no identity of git+ serve's (GITPLUS_SERVED,
//     GITKIT_KEY, GITPLUS_TOKEN_KEY) is the config read at all; a push
//     certificate still wins over the host's word (pusher.go), but the
//     config is read for it too, since naming a source turns
//     requireKnownPusher on by default (policy/pusher.go).
//   - A name source maps the host's user name to the member of the same
//     name, unless gitplus.pusherMap (multi-valued, "<host user> <member>")
//     names another member for it. ssh-auth-info needs no table: the member
//     holding an authenticated key is the pusher.
//   - A value gitplus.pusher or gitplus.pusherMap cannot mean refuses every
//     update [pusher-config]: a typo never silently drops identity.
//   - The variables are trusted because the host sets them after
//     authenticating and the client cannot: the operator must not let
//     clients set them (sshd AcceptEnv/PermitUserEnvironment, a web
//     server passing request headers into them).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/gitio"
)

// CodePusherConfig refuses a push when gitplus.pusher or gitplus.pusherMap
// holds a value the hook cannot mean.
const CodePusherConfig = "pusher-config"

// Config keys the hook reads (lowercased as gitio.Config keeps them).
const (
	ConfigPusher      = "gitplus.pusher"
	ConfigPusherMap   = "gitplus.pushermap"
	ConfigInitialized = "gitplus.initialized"
)

// PusherSSHAuthInfo is the gitplus.pusher value that reads OpenSSH's
// ExposeAuthInfo file.
const PusherSSHAuthInfo = "ssh-auth-info"

// EnvSSHUserAuth names the file sshd (ExposeAuthInfo yes) writes the
// session's successful authentication methods to.
const EnvSSHUserAuth = "SSH_USER_AUTH"

// HostUserVars are the variables a host sets to its authenticated user's
// name, usable as gitplus.pusher = env:NAME: gitolite's GL_USER, the CGI
// REMOTE_USER a web server sets for git http-backend, Gitea's and
// Forgejo's GITEA_PUSHER_NAME and GitLab's GL_USERNAME.
var HostUserVars = []string{"GL_USER", "REMOTE_USER", "GITEA_PUSHER_NAME", "GL_USERNAME"}

// maxAuthInfo bounds the ExposeAuthInfo file read (a line per method).
const maxAuthInfo = 64 << 10

// hostIdentity is what the config and the environment say of the host's
// pusher.
type hostIdentity struct {
	configured bool               // gitplus.pusher is set
	pusher     *policy.HostPusher // nil: the push carries no host identity
	note       string             // why not, for the refusal
}

// readHostIdentity reads the host's pusher as cfg says to, from env (the
// values of HostUserVars and SSH_USER_AUTH).
func readHostIdentity(cfg gitio.Config, env map[string]string) (hostIdentity, error) {
	sources := cfg.All(ConfigPusher)
	if len(sources) == 0 {
		return hostIdentity{}, nil
	}
	h := hostIdentity{configured: true}
	var notes []string
	for _, src := range sources {
		src = strings.TrimSpace(src)
		if src == PusherSSHAuthInfo {
			path := env[EnvSSHUserAuth]
			if path == "" {
				notes = append(notes, "gitplus.pusher is ssh-auth-info and $SSH_USER_AUTH is not set (sshd's ExposeAuthInfo yes sets it)")
				continue
			}
			keys, err := readAuthInfo(path)
			if err != nil {
				return h, err
			}
			if len(keys) == 0 {
				notes = append(notes, fmt.Sprintf("the file %s ($SSH_USER_AUTH) names no public key", path))
				continue
			}
			h.pusher = &policy.HostPusher{Source: src, Keys: keys}
			return h, nil
		}
		name, ok := strings.CutPrefix(src, "env:")
		if !ok || !isHostUserVar(name) {
			return h, &pushRefusal{code: CodePusherConfig, reason: fmt.Sprintf("the repository's git config gitplus.pusher = %q is not one of %s, env:%s; correct it (git config gitplus.pusher ...)",
				src, PusherSSHAuthInfo, strings.Join(HostUserVars, ", env:"))}
		}
		user := env[name]
		if user == "" {
			notes = append(notes, fmt.Sprintf("gitplus.pusher is %s and $%s is not set", src, name))
			continue
		}
		member, err := mapHostUser(cfg, user)
		if err != nil {
			return h, err
		}
		h.pusher = &policy.HostPusher{Source: src, User: user, Member: member}
		return h, nil
	}
	h.note = strings.Join(notes, "; ")
	return h, nil
}

func isHostUserVar(name string) bool {
	for _, v := range HostUserVars {
		if v == name {
			return true
		}
	}
	return false
}

// mapHostUser is the member name user maps to: gitplus.pusherMap's entry
// for it (the last one), else user itself.
func mapHostUser(cfg gitio.Config, user string) (string, error) {
	member := user
	for _, line := range cfg.All(ConfigPusherMap) {
		f := strings.Fields(line)
		if len(f) != 2 {
			return "", &pushRefusal{code: CodePusherConfig, reason: fmt.Sprintf("the repository's git config gitplus.pusherMap = %q is not \"<host user> <member>\"; correct it", line)}
		}
		if f[0] == user {
			member = f[1]
		}
	}
	return member, nil
}

// readAuthInfo returns the keys of the "publickey <type> <base64>" lines of
// an ExposeAuthInfo file.
func readAuthInfo(path string) ([]hubrefs.PublicKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading $%s %s (gitplus.pusher ssh-auth-info): %w", EnvSSHUserAuth, path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAuthInfo+1))
	if err != nil {
		return nil, fmt.Errorf("reading $%s %s: %w", EnvSSHUserAuth, path, err)
	}
	if len(data) > maxAuthInfo {
		return nil, fmt.Errorf("$%s %s is over %d bytes: %w", EnvSSHUserAuth, path, maxAuthInfo, errors.ErrUnsupported)
	}
	var keys []hubrefs.PublicKey
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "publickey ")
		if !ok {
			continue // password, keyboard-interactive, ...: no key
		}
		key, _, err := hubrefs.ParseAuthorizedKeyLine(rest)
		if err != nil {
			return nil, fmt.Errorf("$%s %s: the line %q does not parse: %w", EnvSSHUserAuth, path, line, err)
		}
		keys = append(keys, key)
	}
	return keys, nil
}
