package hubrefs

// SigNamespace is the SSHSIG namespace git uses for commit signatures.
const SigNamespace = "git"

// AgentSocketEnv names the environment variable holding the ssh-agent socket.
const AgentSocketEnv = "SSH_AUTH_SOCK"

// Signer signs event bytes the way git signs commits with gpg.format=ssh.
// Implementations over key files and ssh-agent are in hubrefs/sshsign, so
// that verifying (this package) does not link x/crypto/ssh.
type Signer interface {
	// PublicKey is the key whose signatures Sign produces.
	PublicKey() PublicKey
	// Sign returns the armored SSHSIG signature ("-----BEGIN SSH
	// SIGNATURE-----" ... "-----END SSH SIGNATURE-----\n") of msg in
	// namespace "git" with hash sha512.
	Sign(msg []byte) ([]byte, error)
}
