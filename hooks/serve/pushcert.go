package serve

// The signed push at the HTTP door (docs/serving.md "HTTP"): a receive-pack
// body without a token goes on to receive-pack only if it opens with a push
// certificate that parses, is signed as git+ requires, verifies, is not
// stale or used before, and whose signer is a member of the repository.
//
// Decisions:
//   - The certificate is read as receive-pack reads it: pkt-lines after
//     "push-cert\0<capabilities>", concatenated, up to "push-cert-end\n".
//     Anything git itself never sends there is refused rather than
//     interpreted: a flush or special packet before the end, a NUL in a
//     line (receive-pack would cut the line at it), and anything but the
//     flush that ends the command list right after "push-cert-end" (a
//     second certificate, or unsigned commands beside the signed ones).
//   - The checks are the hook's own (receive.VerifyPushCert;
//     receive.CheckCertUnused, a stale or used certificate) and the
//     membership the token path checks, against the trust read the same way
//     (TrustOf). The hook still judges the certificate in full: the nonce
//     status, the commands against the push, and the record of its use
//     (receive/certrecord.go).
//   - Every refusal is a 401 with a plain-text reason carrying the code the
//     hook would refuse with (bad-push-cert, not-member, push-cert-nonce),
//     as for a token that does not check: the pusher may still
//     authenticate another way. git does not show a POST's 401 body, so
//     the reason goes to the server log too.
//   - The bytes read are handed to receive-pack before the rest of the
//     body, unchanged.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
)

// maxCertBody bounds the bytes read before receive-pack starts: a
// certificate (4 MiB at most, as the hook takes) and its pkt-line framing.
const maxCertBody = 5 << 20

// errNotSigned says that a body does not open with a push certificate.
var errNotSigned = errors.New("the push is not signed")

// errBadCertFraming reports a certificate whose pkt-lines git would not send.
var errBadCertFraming = errors.New("malformed push certificate framing")

// readPushCert reads the push certificate at the start of a receive-pack
// body. It returns every byte it read (to be replayed to receive-pack) and
// the certificate as receive-pack assembles it. errNotSigned: the first
// pkt-line is not "push-cert"; errBadCertFraming: the lines are not as git
// sends them.
func readPushCert(r *bufio.Reader) (read, cert []byte, err error) {
	var buf bytes.Buffer
	next := func() (payload []byte, special bool, err error) {
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil, false, err
		}
		buf.Write(hdr[:])
		n, err := strconv.ParseUint(string(hdr[:]), 16, 16)
		if err != nil {
			return nil, false, fmt.Errorf("%w: pkt-line length %q", errBadCertFraming, hdr[:])
		}
		if n < 4 {
			return nil, true, nil // flush, delimiter or response end
		}
		if buf.Len()+int(n) > maxCertBody {
			return nil, false, fmt.Errorf("%w: the certificate is over %d bytes", errBadCertFraming, maxCertBody)
		}
		start := buf.Len()
		if _, err := io.CopyN(&buf, r, int64(n-4)); err != nil {
			return nil, false, err
		}
		return buf.Bytes()[start:], false, nil
	}
	first, special, err := next()
	if err != nil || special {
		return buf.Bytes(), nil, errNotSigned
	}
	if name, _, _ := bytes.Cut(first, []byte{0}); string(name) != "push-cert" {
		return buf.Bytes(), nil, errNotSigned
	}
	for {
		line, special, err := next()
		switch {
		case errors.Is(err, errBadCertFraming):
			return buf.Bytes(), nil, err
		case err != nil:
			return buf.Bytes(), nil, fmt.Errorf("%w: the body ends inside the certificate", errBadCertFraming)
		case special:
			return buf.Bytes(), nil, fmt.Errorf("%w: a flush before push-cert-end", errBadCertFraming)
		case bytes.IndexByte(line, 0) >= 0:
			return buf.Bytes(), nil, fmt.Errorf("%w: a NUL inside the certificate", errBadCertFraming)
		case string(line) == "push-cert-end\n":
			if _, special, err := next(); err != nil || !special || !bytes.HasSuffix(buf.Bytes(), []byte("0000")) {
				return buf.Bytes(), nil, fmt.Errorf("%w: push-cert-end is not followed by the flush that ends the commands", errBadCertFraming)
			}
			return buf.Bytes(), cert, nil
		}
		cert = append(cert, line...)
	}
}

// certRefused is the body of a 401 for a signed push, one line with the
// refusal code the hook would print (README.md "Refusal codes"), and logs
// it: git does not show the body of a 401 to the pusher.
func (s *Server) certRefused(rel, code, format string, a ...any) string {
	return s.certRefusal(rel, "["+code+"] "+fmt.Sprintf(format, a...))
}

// certRefusal is certRefused of a refusal already reading "[code] reason".
func (s *Server) certRefusal(rel, refusal string) string {
	msg := fmt.Sprintf("git+: refused the signed push to %s: %s", rel, refusal)
	s.logf("%s", msg)
	return msg + "\n"
}

// checkSignedPush reads the certificate of an anonymous receive-pack body
// and judges it for the repository at gitDir (rel names it in messages). It
// returns the bytes read and, when the push may not go on, the reason for a
// 401.
func (s *Server) checkSignedPush(br *bufio.Reader, gitDir, rel string) (read []byte, refusal string, err error) {
	read, raw, err := readPushCert(br)
	if errors.Is(err, errNotSigned) {
		return read, fmt.Sprintf(howToAuth, "pushing to "+rel), nil
	}
	if err != nil {
		return read, s.certRefused(rel, receive.CodeBadPushCert, "%v; push again with git push --signed", err), nil
	}
	cert, key, err := receive.VerifyPushCert(raw)
	if err != nil {
		return read, s.certRefused(rel, receive.CodeBadPushCert, "%v", err), nil
	}
	st, err := TrustOf(gitDir)
	if err != nil {
		return read, "", err
	}
	if _, ok := st.MemberByKey(key); !ok {
		return read, s.certRefused(rel, policy.CodeNotMember, "the push certificate is signed by %s key %s, which is not a member's key in %s; ask an admin to add it (git+ member add), or authenticate with a member token",
			key.Type(), hubrefs.Fingerprint(key), hubrefs.TrustRef), nil
	}
	if err := receive.CheckCertUnused(gitDir, cert, time.Now()); err != nil {
		return read, s.certRefusal(rel, err.Error()), nil
	}
	return read, "", nil
}
