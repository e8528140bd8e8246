package queue

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// FuzzValidate: queue.Validate, the one decoder of queue payloads, never
// panics; what it accepts encodes back to a payload it accepts as the same
// value; an accepted queue.candidate's batch group obeys its rules.
func FuzzValidate(f *testing.F) {
	h := hex("x")
	for _, s := range []string{
		`{"type":"queue.candidate","repo":"r","pr":"0190a1b2-c3d4-7e5f-8a9b-0000000000aa","head":"` + h + `","step":"` + h + `","parents":["` + h + `","` + h + `"],"branch":"refs/heads/queue/main/x"}`,
		`{"type":"queue.candidate","repo":"r","pr":"0190a1b2-c3d4-7e5f-8a9b-0000000000aa","head":"` + h + `","step":"` + h + `","parents":["` + h + `","` + h + `"],"branch":"refs/heads/queue/main/x","groupEnd":"` + h + `","groupSize":4}`,
		`{"type":"queue.candidate","repo":"r","pr":"0190a1b2-c3d4-7e5f-8a9b-0000000000aa","head":"` + h + `","step":"` + h + `","parents":["` + h + `","` + h + `"],"branch":"refs/heads/queue/main/x","groupSize":4}`,
		`{"type":"queue.entered","repo":"r","pr":"0190a1b2-c3d4-7e5f-8a9b-0000000000aa","head":"` + h + `","base":"refs/heads/main","priority":"high"}`,
		`{"type":"queue.left","repo":"r","pr":"0190a1b2-c3d4-7e5f-8a9b-0000000000aa","head":"` + h + `","reason":"failed"}`,
	} {
		var head struct{ Type string }
		_ = json.Unmarshal([]byte(s), &head)
		f.Add(head.Type, []byte(s))
	}
	f.Fuzz(func(t *testing.T, typ string, payload []byte) {
		ev := hubrefs.Event{Type: typ, Repo: "r", Payload: payload}
		v, err := Validate(ev)
		if err != nil {
			return
		}
		if c, ok := v.(*hubrefs.QueueCandidate); ok && (c.GroupEnd != "" || c.GroupSize != 0) {
			if pr.ValidOID(c.GroupEnd) != nil || c.GroupSize < 1 || c.GroupSize > trust.MaxCheckEvery || (c.GroupEnd != c.Step && c.GroupSize < 2) {
				t.Fatalf("accepted a bad group: %+v", c)
			}
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Validate(hubrefs.Event{Type: typ, Repo: "r", Payload: raw})
		if err != nil {
			t.Fatalf("re-encoded %s refused: %v", raw, err)
		}
		if !reflect.DeepEqual(v, again) {
			t.Fatalf("round trip: %+v != %+v", v, again)
		}
	})
}
