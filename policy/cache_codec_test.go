package policy

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs"
)

// codecLog is a small log: a root, two children by different signers, a
// merge of both, and an unsigned event.
func codecLog(t testing.TB) (plumbing.Hash, []hubrefs.Event) {
	key := func(seed byte) ssh.PublicKey {
		priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
		k, err := ssh.NewPublicKey(priv.Public())
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a, b := key(1), key(2)
	id := func(n byte) plumbing.Hash { return plumbing.Hash{n, 0xee} }
	ev := func(n byte, typ string, k ssh.PublicKey, parents ...plumbing.Hash) hubrefs.Event {
		return hubrefs.Event{ID: id(n), Parents: parents, Type: typ, Repo: "r-1",
			Payload: json.RawMessage(`{"type":"` + typ + `","repo":"r-1","n":` + string('0'+rune(n)) + `}`), Time: int64(1700000000 + int(n)), Signer: k}
	}
	evs := []hubrefs.Event{
		ev(1, hubrefs.TypePROpened, a),
		ev(2, hubrefs.TypeReviewSubmit, b, id(1)),
		ev(3, hubrefs.TypeCheckCompleted, a, id(1)),
		ev(4, hubrefs.TypePRMerged, a, id(2), id(3)),
		ev(5, hubrefs.TypeThreadOpened, nil, id(4)),
	}
	ordered, err := hubrefs.CausalOrder(evs)
	if err != nil {
		t.Fatal(err)
	}
	return id(5), ordered
}

func TestCacheCodecRoundTrip(t *testing.T) {
	is := is.New(t)
	tip, evs := codecLog(t)
	enc := encodeLog(tip, evs)
	got, ok := decodeLog(tip, enc)
	is.True(ok)
	is.Equal(len(got), len(evs))
	for i := range evs {
		is.Equal(got[i].ID, evs[i].ID)
		is.Equal(got[i].Parents, evs[i].Parents)
		is.Equal(got[i].Type, evs[i].Type)
		is.Equal(got[i].Repo, evs[i].Repo)
		is.Equal(string(got[i].Payload), string(evs[i].Payload))
		is.Equal(got[i].Time, evs[i].Time)
		is.Equal(got[i].Signer == nil, evs[i].Signer == nil)
		if evs[i].Signer != nil {
			is.True(bytes.Equal(got[i].Signer.Marshal(), evs[i].Signer.Marshal()))
		}
	}

	// Every way an entry can be wrong reads as a miss.
	_, ok = decodeLog(plumbing.Hash{9}, enc)
	is.True(!ok) // another tip
	for cut := 0; cut < len(enc); cut++ {
		_, ok = decodeLog(tip, enc[:cut])
		is.True(!ok) // truncated anywhere
	}
	_, ok = decodeLog(tip, append(bytes.Clone(enc), 0))
	is.True(!ok) // trailing bytes
	_, ok = decodeLog(tip, []byte(`{"v":1,"tip":"`+tip.String()+`","events":[]}`))
	is.True(!ok) // a version 1 (JSON) entry
	_, ok = decodeLog(tip, encodeLog(tip, evs[:3]))
	is.True(!ok) // the tip is not among the events
	_, ok = decodeLog(evs[3].ID, encodeLog(evs[3].ID, append(evs[:1:1], evs[3])))
	is.True(!ok) // an event whose parents are missing
	unknown := append([]hubrefs.Event(nil), evs...)
	unknown[0].Type = "no.such.type"
	_, ok = decodeLog(tip, encodeLog(tip, unknown))
	is.True(!ok) // an unknown event type
}

func FuzzDecodeLog(f *testing.F) {
	tip, evs := codecLog(f)
	f.Add(tip[:], encodeLog(tip, evs))
	f.Add(tip[:], encodeLog(tip, evs[:1]))
	f.Add(tip[:], []byte("gpfc\x02"))
	f.Fuzz(func(t *testing.T, tipb, data []byte) {
		var tip plumbing.Hash
		copy(tip[:], tipb)
		got, ok := decodeLog(tip, data)
		if !ok {
			return
		}
		// What decodes is a whole log at tip and survives a round trip.
		again, ok := decodeLog(tip, encodeLog(tip, got))
		if !ok || len(again) != len(got) {
			t.Fatalf("a decoded entry does not round-trip")
		}
		for i := range got {
			if again[i].ID != got[i].ID || string(again[i].Payload) != string(got[i].Payload) {
				t.Fatalf("event %d changed in a round trip", i)
			}
		}
	})
}
