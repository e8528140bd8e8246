package serve

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newLimiter(Rate{N: 3, Per: time.Minute})
	l.now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if ok, _, _ := l.take("a"); !ok {
			t.Fatalf("request %d of a burst of 3 refused", i+1)
		}
	}
	ok, wait, first := l.take("a")
	if ok || wait != 20*time.Second || !first {
		t.Fatalf("the 4th request: ok %v, wait %v, first %v; want refused, 20s, first", ok, wait, first)
	}
	if _, _, first := l.take("a"); first {
		t.Fatal("a second refusal in a row is reported as the first (it would be logged again)")
	}
	if ok, _, _ := l.take("b"); !ok {
		t.Fatal("another client shares a's bucket")
	}
	now = now.Add(20 * time.Second)
	if ok, _, _ := l.take("a"); !ok {
		t.Fatal("one request is not back after a third of the period")
	}
	if ok, _, _ := l.take("a"); ok {
		t.Fatal("two requests back after a third of the period")
	}
	now = now.Add(time.Hour)
	for i := 0; i < 3; i++ {
		if ok, _, _ := l.take("a"); !ok {
			t.Fatalf("after an idle hour, request %d refused: the bucket holds more than N", i+1)
		}
	}
	if ok, _, _ := l.take("a"); ok {
		t.Fatal("after an idle hour the bucket holds more than N")
	}
}

func TestLimiterBoundedMemory(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newLimiter(Rate{N: 1, Per: time.Minute})
	l.now = func() time.Time { return now }
	for i := 0; i < maxClients+10; i++ {
		now = now.Add(time.Millisecond)
		l.take(fmt.Sprint(i))
	}
	if len(l.clients) > maxClients {
		t.Fatalf("%d clients kept, bound %d", len(l.clients), maxClients)
	}
	if _, kept := l.clients[fmt.Sprint(maxClients+9)]; !kept {
		t.Fatal("the newest client was not kept")
	}
}

func TestClientOf(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:5555":             "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "2001:db8:1:2::/64",
		"[::ffff:192.0.2.7]:80":      "192.0.2.7",
		"not-an-address":             "not-an-address",
	} {
		if got := clientOf(&http.Request{RemoteAddr: addr}); got != want {
			t.Errorf("clientOf(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestParseRate(t *testing.T) {
	if r, err := ParseRate("120/1m"); err != nil || r != (Rate{120, time.Minute}) {
		t.Fatalf("120/1m: %v %v", r, err)
	}
	for _, bad := range []string{"", "120", "0/1m", "-1/1m", "x/1m", "5/0s", "5/-1s", "5/soon"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
	if got := DefaultCheckRate.String(); got != "120/1m0s" {
		t.Fatalf("the default's flag form: %q", got)
	}
	if r, err := ParseRate(DefaultCheckRate.String()); err != nil || r != DefaultCheckRate {
		t.Fatalf("the default does not read back: %v %v", r, err)
	}
}
