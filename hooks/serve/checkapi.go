package serve

// Recording a check without git+ (docs/serving.md "Recording a check without
// git+"): a CI job holding only curl, ssh-keygen and a member key appends
// check.started or check.completed to a pull request, signed by that key end
// to end.
//
//	POST /<repo>/hub/checks/prepare   JSON {"pr","name","head","conclusion","url","attempts","type","member"}
//	     → 200, the exact bytes of the event commit to sign (no signature)
//	POST /<repo>/hub/checks/append    multipart: event=<those bytes>, signature=<ssh-keygen -Y sign -n git output>
//	     → 200 {"id","ref"}; 409 and fresh bytes to sign; 4xx with the hook's refusal
//
// Decisions:
//   - Serve never signs. prepare lays the event out as every git+ writer
//     does (hubrefs.EncodeEvent): the empty tree, the pull request ref's
//     current tip as parent, author = committer = the member name given,
//     now; the job signs exactly those bytes in namespace "git" (the SSH
//     signature namespace of git commits and of every hub event). append
//     puts the signature into the commit's gpgsig header, which is what git
//     verify-commit strips and checks, so the object is the one the job
//     signed.
//   - append decodes the signed commit as every reader does (signature,
//     payload keys, type check.started or check.completed) and judges its
//     signer before anything is written: a current member holding
//     hub.check:<name> (trust.State.MemberByKey, trust.Member.Has, the
//     hook's own test and codes: not-member, missing-capability). Only then
//     is the event pushed into the repository through its hooks,
//     compare-and-swap from its parent, from a scratch repository
//     (gitio.PushScratch): the object reaches the repository only inside
//     receive-pack's quarantine, so a push the hook refuses leaves nothing
//     behind. The boundary judges it as any push, and a refusal comes back
//     as 403 with the hook's "git+: refused ... [code]" lines.
//   - Bounds (docs/serving.md "Bounds"): a request body of at most
//     maxCheckRequest bytes (413), and CheckRate requests per client
//     (ratelimit.go, 429 with Retry-After), both counted before the
//     repository is looked up.
//   - A race: the signature covers the parent, so serve cannot rebuild the
//     event on a tip that moved, as git+'s own writers do. When the ref
//     moved after prepare (or the push lost a race), append answers 409
//     with the same event laid out again on the new tip: the job signs that
//     and sends it again (the documented loop does so, a few times).
//   - Authentication: the signature is the identity, so a public server
//     takes these requests without credentials; a --private one needs a
//     member's token, as for every other request, and answers a path that
//     is no served repository exactly as smart HTTP does (hiddenRepo).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/gitio"
)

var checkAPIRE = regexp.MustCompile(`^(/.+)/hub/checks/(prepare|append)$`)

// CheckRequest is the body of /hub/checks/prepare.
type CheckRequest struct {
	PR         string `json:"pr"`
	Type       string `json:"type,omitempty"` // check.completed (default) or check.started
	Name       string `json:"name"`
	Head       string `json:"head"`
	Conclusion string `json:"conclusion,omitempty"`
	URL        string `json:"url,omitempty"`
	Attempts   int    `json:"attempts,omitempty"`
	Member     string `json:"member"` // the author name written into the event (not trusted: the key is)
}

// maxCheckRequest bounds a check request's body: an event up to the
// default event ceiling (64 KiB, docs/events.md), its signature and the
// form's framing. A check event is far smaller (its output is at most
// hubrefs.MaxCheckOutput bytes).
const maxCheckRequest = 96 << 10

// tooLarge answers 413.
func tooLarge(w http.ResponseWriter) {
	http.Error(w, fmt.Sprintf("git+: a check request is at most %d bytes (an event within the 64 KiB event ceiling and its signature): send the event prepare answered, unchanged", maxCheckRequest), http.StatusRequestEntityTooLarge)
}

func isTooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}

// checkAPI answers the two check endpoints; it reports whether r was one.
func (s *Server) checkAPI(w http.ResponseWriter, r *http.Request) bool {
	m := checkAPIRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return false
	}
	// The bounds come first, alike for every path: they say nothing of
	// which repositories exist.
	if !s.checkRateOK(w, r) {
		return true
	}
	if r.ContentLength > maxCheckRequest {
		tooLarge(w)
		return true
	}
	rel := strings.TrimPrefix(m[1], "/")
	dir, err := s.Repo(m[1])
	switch {
	case errors.Is(err, ErrEscape):
		http.Error(w, "bad path: "+err.Error(), http.StatusBadRequest)
		return true
	case errors.Is(err, ErrNoRepo) && s.Private:
		hiddenRepo(w, r, rel)
		return true
	case errors.Is(err, ErrNoRepo):
		http.Error(w, "git+: "+rel+" is not a git+ repository here", http.StatusNotFound)
		return true
	case err != nil:
		s.logf("%v", err)
		http.Error(w, "repository not ready", http.StatusInternalServerError)
		return true
	}
	if s.Private {
		name, token, ok := r.BasicAuth()
		if !ok {
			privateRepo(w, rel)
			return true
		}
		st, since, err := s.memberKeys(dir)
		if err != nil {
			s.logf("%v", err)
			http.Error(w, "repository not ready", http.StatusInternalServerError)
			return true
		}
		ts, _ := LoadTokens(dir)
		if _, ok := CheckToken(ts, st, since, name, token); !ok {
			badToken(w, rel, name)
			return true
		}
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "git+: POST only", http.StatusMethodNotAllowed)
		return true
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxCheckRequest)
	if m[2] == "prepare" {
		s.checkPrepare(w, r, dir)
	} else {
		s.checkAppend(w, r, dir)
	}
	return true
}

// checkPrepare answers the bytes to sign.
func (s *Server) checkPrepare(w http.ResponseWriter, r *http.Request, dir string) {
	var req CheckRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		if isTooLarge(err) {
			tooLarge(w)
			return
		}
		http.Error(w, "git+: the body is not a check request (JSON: pr, name, head, conclusion, url, attempts, type, member): "+err.Error(), http.StatusBadRequest)
		return
	}
	if req.Type == "" {
		req.Type = hubrefs.TypeCheckCompleted
	}
	if req.Type != hubrefs.TypeCheckCompleted && req.Type != hubrefs.TypeCheckStarted {
		http.Error(w, fmt.Sprintf("git+: type %q: this endpoint writes %s or %s", req.Type, hubrefs.TypeCheckCompleted, hubrefs.TypeCheckStarted), http.StatusBadRequest)
		return
	}
	if _, err := uuid.Parse(req.PR); err != nil {
		http.Error(w, fmt.Sprintf("git+: pr %q is not a pull request id (git+ pr list shows them)", req.PR), http.StatusBadRequest)
		return
	}
	st, _, err := s.memberKeys(dir)
	if err != nil {
		s.logf("%v", err)
		http.Error(w, "repository not ready", http.StatusInternalServerError)
		return
	}
	payload, err := json.Marshal(hubrefs.Check{Base: hubrefs.Base{Type: req.Type, Repo: st.RepoID},
		Name: req.Name, Head: req.Head, Conclusion: req.Conclusion, URL: req.URL, Attempts: req.Attempts})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ref := hubrefs.PRRefPrefix + req.PR
	raw, status, err := prepareOn(dir, ref, payload, req.Member)
	if err != nil {
		http.Error(w, "git+: "+err.Error(), status)
		return
	}
	writeUnsigned(w, http.StatusOK, ref, raw)
}

// prepareOn lays out the unsigned event with payload on ref's current tip.
func prepareOn(dir, ref string, payload []byte, member string) ([]byte, int, error) {
	tip, err := readRef(dir, ref)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	if tip.IsZero() {
		return nil, http.StatusNotFound, fmt.Errorf("no pull request %s here (no %s)", strings.TrimPrefix(ref, hubrefs.PRRefPrefix), ref)
	}
	if member == "" {
		return nil, http.StatusBadRequest, errors.New(`"member" is missing: the member name written into the event`)
	}
	var c capture
	if _, err := hubrefs.EncodeEvent(json.RawMessage(payload), []plumbing.Hash{tip}, member, clock.Now(), &c); err != nil {
		return nil, http.StatusBadRequest, err
	}
	return c.msg, 0, nil
}

func writeUnsigned(w http.ResponseWriter, code int, ref string, raw []byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-GitPlus-Ref", ref)
	w.WriteHeader(code)
	_, _ = w.Write(raw)
}

// capture is a hubrefs.Signer that keeps the bytes it is asked to sign.
type capture struct{ msg []byte }

func (c *capture) PublicKey() hubrefs.PublicKey { return nil }
func (c *capture) Sign(msg []byte) ([]byte, error) {
	c.msg = bytes.Clone(msg)
	return []byte("-----BEGIN SSH SIGNATURE-----\nx\n-----END SSH SIGNATURE-----\n"), nil
}

func readRef(dir, ref string) (plumbing.Hash, error) {
	refs, err := gitio.ReadRefsUnder(dir, []string{hubrefs.PRRefPrefix}, nil)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return refs[ref], nil
}

// signEvent puts armored into unsigned's gpgsig header (after the
// committer line, as git writes it).
func signEvent(unsigned, armored []byte) ([]byte, error) {
	end := bytes.Index(unsigned, []byte("\n\n"))
	if end < 0 || bytes.Contains(unsigned[:end+1], []byte("\ngpgsig ")) || !bytes.HasPrefix(unsigned, []byte("tree ")) {
		return nil, errors.New("the event is not the unsigned commit prepare answered (send its bytes unchanged)")
	}
	armored = bytes.TrimRight(bytes.ReplaceAll(armored, []byte("\r\n"), []byte("\n")), "\n")
	if !bytes.HasPrefix(armored, []byte("-----BEGIN SSH SIGNATURE-----\n")) || !bytes.HasSuffix(armored, []byte("\n-----END SSH SIGNATURE-----")) || bytes.Contains(armored, []byte("\n\n")) {
		return nil, errors.New("the signature is not an armored SSH signature (ssh-keygen -Y sign -n git -f KEY FILE writes FILE.sig)")
	}
	out := make([]byte, 0, len(unsigned)+len(armored)+16)
	out = append(out, unsigned[:end+1]...)
	out = append(out, "gpgsig "...)
	out = append(out, bytes.ReplaceAll(armored, []byte("\n"), []byte("\n "))...)
	out = append(out, '\n')
	out = append(out, unsigned[end+1:]...)
	return out, nil
}

// checkAppend assembles, writes and pushes a signed check event.
func (s *Server) checkAppend(w http.ResponseWriter, r *http.Request, dir string) {
	// The whole body fits in memory (maxCheckRequest): nothing goes to a
	// temporary file.
	err := r.ParseMultipartForm(maxCheckRequest)
	if r.MultipartForm != nil {
		defer r.MultipartForm.RemoveAll()
	}
	if err != nil {
		if isTooLarge(err) {
			tooLarge(w)
			return
		}
		http.Error(w, "git+: send the event and its signature as multipart form fields event and signature (curl -F event=@FILE -F signature=@FILE.sig): "+err.Error(), http.StatusBadRequest)
		return
	}
	field := func(name string) []byte {
		if f, _, err := r.FormFile(name); err == nil {
			defer f.Close()
			b, _ := io.ReadAll(f)
			return b
		}
		return []byte(r.FormValue(name))
	}
	unsigned, armored := field("event"), field("signature")
	signed, err := signEvent(unsigned, armored)
	if err != nil {
		http.Error(w, "git+: "+err.Error(), http.StatusBadRequest)
		return
	}
	ev, err := hubrefs.Decode(signed, hubrefs.Ceilings{})
	if err != nil {
		http.Error(w, "git+: the signed event does not verify: "+err.Error(), http.StatusBadRequest)
		return
	}
	if ev.Type != hubrefs.TypeCheckCompleted && ev.Type != hubrefs.TypeCheckStarted || len(ev.Parents) != 1 {
		http.Error(w, "git+: this endpoint appends check.started or check.completed on a pull request's tip", http.StatusBadRequest)
		return
	}
	var chk hubrefs.Check
	if err := json.Unmarshal(ev.Payload, &chk); err != nil {
		http.Error(w, "git+: "+err.Error(), http.StatusBadRequest)
		return
	}
	// The pull request is the one whose log holds the parent: prepare
	// named it in X-GitPlus-Ref, the client sends it back as "pr".
	pr := r.FormValue("pr")
	if _, err := uuid.Parse(pr); err != nil {
		http.Error(w, fmt.Sprintf("git+: pr %q is not a pull request id (send -F pr=ID)", pr), http.StatusBadRequest)
		return
	}
	ref := hubrefs.PRRefPrefix + pr
	stale := func() {
		member := authorName(unsigned)
		raw, status, err := prepareOn(dir, ref, ev.Payload, member)
		if err != nil {
			http.Error(w, "git+: "+err.Error(), status)
			return
		}
		s.logf("checks: %s moved under a prepared %s; answered 409 with the event laid out again", ref, ev.Type)
		writeUnsigned(w, http.StatusConflict, ref, raw)
	}
	tip, err := readRef(dir, ref)
	if err != nil {
		s.logf("%v", err)
		http.Error(w, "repository not ready", http.StatusInternalServerError)
		return
	}
	if tip.IsZero() {
		http.Error(w, fmt.Sprintf("git+: no pull request %s here", pr), http.StatusNotFound)
		return
	}
	// The signer first: a stranger's event, or one whose signer may not
	// report this check, is refused before anything is written.
	if !s.checkSigner(w, dir, ref, ev, chk.Name) {
		return
	}
	if tip != ev.Parents[0] {
		stale()
		return
	}
	// Written only into a scratch repository and pushed from there: it
	// reaches this repository inside receive-pack's quarantine, which a
	// refusal discards (gitio.PushScratch).
	id := plumbing.ComputeHash(plumbing.CommitObject, signed)
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	_, _, err = gitio.PushScratch(ctx, dir, []gitio.ScratchObject{{Type: plumbing.CommitObject, Content: signed}},
		gitio.PushOptions{Env: []string{receive.EnvServed + "=1"}, Updates: []gitio.PushUpdate{{Ref: ref, Old: tip, New: id}}})
	var refused *gitio.PushRefusedError
	switch {
	case err == nil:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"id": id.String(), "ref": ref, "type": ev.Type})
	case errors.Is(err, gitio.ErrPushStale):
		stale()
	case errors.As(err, &refused):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		for _, l := range refused.Lines {
			fmt.Fprintln(w, l)
		}
		if len(refused.Lines) == 0 {
			fmt.Fprintf(w, "git+: %s refused (%s)\n", ref, refused.Status)
		}
	default:
		s.logf("checks: pushing %s to %s: %v", id, ref, err)
		http.Error(w, "git+: pushing the event: "+err.Error(), http.StatusInternalServerError)
	}
}

// checkSigner judges the signer of a check event on ref as the hook does
// (policy's hub judgement: a current member, holding hub.check:<name>),
// before anything is written. A refusal is answered 403 with the line the
// hook would print; it returns false then.
func (s *Server) checkSigner(w http.ResponseWriter, dir, ref string, ev hubrefs.Event, name string) bool {
	st, _, err := s.memberKeys(dir)
	if err != nil {
		s.logf("%v", err)
		http.Error(w, "repository not ready", http.StatusInternalServerError)
		return false
	}
	v := policy.Verdict{Update: policy.Update{Ref: ref}}
	m, ok := st.MemberByKey(ev.Signer)
	switch {
	case !ok:
		v.Code = policy.CodeNotMember
		v.Reason = fmt.Sprintf("%s: event %s (%s) is signed by a key that is not a member's (%s); ask an admin to git+ member add it", ref, ev.ID, ev.Type, hubrefs.Fingerprint(ev.Signer))
	case !m.Has(trust.CheckCap(name)):
		v.Code = policy.CodeMissingCapability
		v.Reason = fmt.Sprintf("%s: member %q signed event %s (%s) without holding %s; ask an admin to grant it (git+ member change %s --add-cap %s)", ref, m.Name, ev.ID, ev.Type, trust.CheckCap(name), m.Name, trust.CheckCap(name))
	default:
		return true
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintln(w, receive.RefusalLine(v))
	return false
}

// authorName is the member name of an unsigned event's author line.
func authorName(raw []byte) string {
	for _, l := range strings.Split(string(raw), "\n") {
		if l == "" {
			break
		}
		if rest, ok := strings.CutPrefix(l, "author "); ok {
			if i := strings.Index(rest, " <"); i > 0 {
				return rest[:i]
			}
		}
	}
	return ""
}
