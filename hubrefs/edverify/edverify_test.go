package edverify

import (
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"filippo.io/edwards25519"
)

// agree fails unless Key.Verify and crypto/ed25519.Verify give the same
// verdict on (pub, msg, sig); it returns that verdict.
func agree(t testing.TB, pub, msg, sig []byte) bool {
	t.Helper()
	want := len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, msg, sig)
	k, err := keyFor(pub)
	if err != nil {
		if want {
			t.Fatalf("NewKey(%x): %v, but crypto/ed25519 accepts a signature by it", pub, err)
		}
		return false
	}
	if got := k.Verify(msg, sig); got != want {
		t.Fatalf("pub %x msg %x sig %x: Verify %v, crypto/ed25519 %v", pub, msg, sig, got, want)
	}
	return want
}

var testKeys = map[string]*Key{}

// keyFor is NewKey, once per key (a table takes a millisecond to build).
func keyFor(pub []byte) (*Key, error) {
	if k, ok := testKeys[string(pub)]; ok {
		return k, nil
	}
	k, err := NewKey(pub)
	if err == nil {
		testKeys[string(pub)] = k
	}
	return k, err
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestAgreesOnValidAndCorrupted signs random messages with random keys and
// checks both verifiers accept them, then flips bits of the signature, the
// message and the key and checks they agree on each (almost all refused).
func TestAgreesOnValidAndCorrupted(t *testing.T) {
	r := seeded(1)
	for i := 0; i < 40; i++ {
		priv := ed25519.NewKeyFromSeed(randBytes(r, 32))
		pub := []byte(priv.Public().(ed25519.PublicKey))
		k, err := NewKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		for m := 0; m < 10; m++ {
			msg := randBytes(r, r.IntN(300))
			sig := ed25519.Sign(priv, msg)
			if !k.Verify(msg, sig) {
				t.Fatalf("a valid signature refused: pub %x msg %x sig %x", pub, msg, sig)
			}
			bad := append([]byte(nil), sig...)
			bad[r.IntN(64)] ^= 1 << r.IntN(8)
			if agree(t, pub, msg, bad) {
				t.Fatalf("a corrupted signature accepted")
			}
			if len(msg) > 0 {
				m2 := append([]byte(nil), msg...)
				m2[r.IntN(len(m2))] ^= 1 << r.IntN(8)
				if k.Verify(m2, sig) || ed25519.Verify(pub, m2, sig) {
					t.Fatal("a signature of another message accepted")
				}
			}
			if m == 0 {
				p2 := append([]byte(nil), pub...)
				p2[r.IntN(32)] ^= 1 << r.IntN(8)
				agree(t, p2, msg, sig)
			}
		}
	}
}

// order is ℓ, the order of the base point, little-endian.
var order, _ = hex.DecodeString("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")

// addLE returns a+b for 32-byte little-endian numbers (mod 2^256).
func addLE(a, b []byte) []byte {
	out := make([]byte, 32)
	c := 0
	for i := 0; i < 32; i++ {
		v := int(a[i]) + int(b[i]) + c
		out[i], c = byte(v), v>>8
	}
	return out
}

// TestNonCanonicalS: S + ℓ (same value mod ℓ, top bits still clear) is
// refused by both.
func TestNonCanonicalS(t *testing.T) {
	r := seeded(2)
	n := 0
	for n < 20 {
		priv := ed25519.NewKeyFromSeed(randBytes(r, 32))
		msg := randBytes(r, 40)
		sig := ed25519.Sign(priv, msg)
		s2 := addLE(sig[32:], order)
		if s2[31]&224 != 0 {
			continue
		}
		bad := append(append([]byte(nil), sig[:32]...), s2...)
		if agree(t, priv.Public().(ed25519.PublicKey), msg, bad) {
			t.Fatal("non-canonical S accepted")
		}
		n++
	}
}

// smallOrder are the encodings of the eight points of order dividing 8,
// and non-canonical encodings of some (y ≥ p, or x = 0 with the sign bit).
var smallOrder = []string{
	"0100000000000000000000000000000000000000000000000000000000000000",
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"0000000000000000000000000000000000000000000000000000000000000080",
	"0000000000000000000000000000000000000000000000000000000000000000",
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
	"0100000000000000000000000000000000000000000000000000000000000080",
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
}

func mustHex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCraftedKeys checks agreement where cofactored and cofactorless
// verification differ: keys of small order and keys with a small-order
// component (A = aB + T). Signatures are forged for small-order keys
// (R = [S]B + [k]T holds for one k in eight) and made honestly for mixed
// keys (valid without the cofactor only when [k]T is the identity), so
// both verdicts occur.
func TestCraftedKeys(t *testing.T) {
	r := seeded(3)
	accepted, refused := 0, 0
	for _, h := range smallOrder {
		pub := mustHex(t, h)
		T, err := new(edwards25519.Point).SetBytes(pub)
		if err != nil {
			agree(t, pub, []byte("m"), make([]byte, 64))
			continue
		}
		for i := 0; i < 24; i++ {
			msg := randBytes(r, 20)
			// Forge: R = [S]B + j·(−T)... try every small multiple.
			s, _ := new(edwards25519.Scalar).SetUniformBytes(randBytes(r, 64))
			for j := 0; j < 8; j++ {
				jT := new(edwards25519.Point).Set(edwards25519.NewIdentityPoint())
				for m := 0; m < j; m++ {
					jT.Subtract(jT, T)
				}
				R := new(edwards25519.Point).ScalarBaseMult(s)
				R.Add(R, jT)
				sig := append(R.Bytes(), s.Bytes()...)
				if agree(t, pub, msg, sig) {
					accepted++
				} else {
					refused++
				}
			}
		}
		// Mixed-order keys: a·B + T, signed by hand.
		for i := 0; i < 16; i++ {
			a, _ := new(edwards25519.Scalar).SetUniformBytes(randBytes(r, 64))
			A := new(edwards25519.Point).ScalarBaseMult(a)
			A.Add(A, T)
			rr, _ := new(edwards25519.Scalar).SetUniformBytes(randBytes(r, 64))
			R := new(edwards25519.Point).ScalarBaseMult(rr)
			msg := randBytes(r, 30)
			hh := sha512.New()
			hh.Write(R.Bytes())
			hh.Write(A.Bytes())
			hh.Write(msg)
			k, _ := new(edwards25519.Scalar).SetUniformBytes(hh.Sum(nil))
			S := new(edwards25519.Scalar).MultiplyAdd(k, a, rr)
			sig := append(R.Bytes(), S.Bytes()...)
			if agree(t, A.Bytes(), msg, sig) {
				accepted++
			} else {
				refused++
			}
		}
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("crafted cases: %d accepted, %d refused; want both verdicts exercised", accepted, refused)
	}
}

// FuzzVerify: any key, message and signature get crypto/ed25519's verdict.
func FuzzVerify(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	msg := []byte("event")
	f.Add([]byte(priv.Public().(ed25519.PublicKey)), msg, ed25519.Sign(priv, msg))
	for _, h := range smallOrder {
		b, _ := hex.DecodeString(h)
		f.Add(b, msg, append(append([]byte(nil), b...), make([]byte, 32)...))
	}
	f.Fuzz(func(t *testing.T, pub, msg, sig []byte) {
		agree(t, pub, msg, sig)
	})
}

func BenchmarkVerify(b *testing.B) {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	pub := priv.Public().(ed25519.PublicKey)
	msg := make([]byte, 200)
	sig := ed25519.Sign(priv, msg)
	k, err := NewKey(pub)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("edverify", func(b *testing.B) {
		for b.Loop() {
			if !k.Verify(msg, sig) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("crypto-ed25519", func(b *testing.B) {
		for b.Loop() {
			if !ed25519.Verify(pub, msg, sig) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("newkey", func(b *testing.B) {
		for b.Loop() {
			if _, err := NewKey(pub); err != nil {
				b.Fatal(err)
			}
		}
	})
}
