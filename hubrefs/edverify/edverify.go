// Package edverify verifies Ed25519 signatures by one public key many times,
// faster than crypto/ed25519.Verify, with exactly its verdicts
// (docs/scale.md).
//
// crypto/ed25519.Verify checks a signature (R, S) of message M by key A as
// [S]B + [k](−A) == R, with k = SHA-512(R ‖ A ‖ M) mod ℓ, by decoding A and
// computing both products with one shared chain of ~253 point doublings.
// Reading a long hub log verifies thousands of signatures by a handful of
// keys, so a Key precomputes, once, a table of multiples of −A at every
// 8-bit position of a scalar (and one such table of the base point B is
// shared by all keys): each product is then at most 32 additions of table
// points and no doubling, about a quarter of the work.
//
// Same verdicts: the checks are those of crypto/ed25519 in the same order
// (signature length, the three top bits of S zero, A decoding as a point
// with the same decoder, S canonical, the same k), the group element
// [S]B + [k](−A) is the same whatever the order of additions, and its
// encoding is unique, compared byte for byte with R as crypto/ed25519 does.
// The differential tests (edverify_test.go) check agreement on valid,
// corrupted and crafted signatures and keys.
//
// A table costs about a millisecond to build and 480 KiB: use a Key for a
// key that signs many messages; ShouldBuild says when.
package edverify

import (
	"bytes"
	"crypto/sha512"
	"errors"
	"sync"

	"filippo.io/edwards25519"
	"filippo.io/edwards25519/field"
)

const (
	window    = 8                   // bits per scalar digit
	positions = 256 / window        // digits per scalar
	entries   = 1 << (window - 1)   // multiples per position: 1 … 128
	keySize   = 32                  // Ed25519 public key
	sigSize   = 64                  // Ed25519 signature
	tableSize = positions * entries // points per table
)

// niels is an affine point (x, y) kept as y+x, y−x and 2d·x·y, the form a
// mixed addition reads.
type niels struct{ ypx, ymx, xy2d field.Element }

// table holds, at [i][j], (j+1)·2^(8i)·P for one point P.
type table [positions][entries]niels

// ext is a point in extended coordinates (X:Y:Z:T), x = X/Z, y = Y/Z,
// x·y = T/Z.
type ext struct{ X, Y, Z, T field.Element }

var (
	d2        field.Element // 2d, d = −121665/121666
	baseOnce  sync.Once
	baseTable *table
)

func init() {
	var num, den field.Element
	num.SetBytes(le32(121665))
	den.SetBytes(le32(121666))
	den.Invert(&den)
	num.Negate(&num)
	d2.Multiply(&num, &den)
	d2.Add(&d2, &d2)
}

func le32(v uint32) []byte {
	b := make([]byte, 32)
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	return b
}

// base returns the table of the base point, built on first use.
func base() *table {
	baseOnce.Do(func() { baseTable = newTable(edwards25519.NewGeneratorPoint()) })
	return baseTable
}

// newTable computes the multiples of p, then brings them all to affine
// coordinates with one field inversion (Montgomery's simultaneous
// inversion).
func newTable(p *edwards25519.Point) *table {
	pts := make([]edwards25519.Point, tableSize)
	q := new(edwards25519.Point).Set(p)
	for i := 0; i < positions; i++ {
		acc := new(edwards25519.Point).Set(q)
		for j := 0; j < entries; j++ {
			pts[i*entries+j].Set(acc)
			acc.Add(acc, q)
		}
		for k := 0; k < window; k++ {
			q.Add(q, q)
		}
	}
	xs := make([]field.Element, tableSize)
	ys := make([]field.Element, tableSize)
	zs := make([]field.Element, tableSize)
	prefix := make([]field.Element, tableSize)
	for i := range pts {
		X, Y, Z, _ := pts[i].ExtendedCoordinates()
		xs[i], ys[i], zs[i] = *X, *Y, *Z
		if i == 0 {
			prefix[i] = zs[i]
		} else {
			prefix[i].Multiply(&prefix[i-1], &zs[i])
		}
	}
	var inv, zinv field.Element
	inv.Invert(&prefix[tableSize-1]) // Z is never zero on this curve
	t := new(table)
	for i := tableSize - 1; i >= 0; i-- {
		if i > 0 {
			zinv.Multiply(&inv, &prefix[i-1])
			inv.Multiply(&inv, &zs[i])
		} else {
			zinv.Set(&inv)
		}
		var x, y field.Element
		x.Multiply(&xs[i], &zinv)
		y.Multiply(&ys[i], &zinv)
		n := &t[i/entries][i%entries]
		n.ypx.Add(&y, &x)
		n.ymx.Subtract(&y, &x)
		n.xy2d.Multiply(&x, &y)
		n.xy2d.Multiply(&n.xy2d, &d2)
	}
	return t
}

// madd sets p = p + q, or p − q when neg (extended coordinates, a = −1:
// Hisil–Wong–Carter–Dawson 2008, with q's Z = 1).
func (p *ext) madd(q *niels, neg bool) {
	var a, b, c, d, e, f, g, h field.Element
	ypx, ymx := &q.ypx, &q.ymx
	if neg { // −(x, y) = (−x, y): y+x and y−x swap, 2dxy changes sign
		ypx, ymx = ymx, ypx
	}
	a.Subtract(&p.Y, &p.X)
	a.Multiply(&a, ymx)
	b.Add(&p.Y, &p.X)
	b.Multiply(&b, ypx)
	c.Multiply(&p.T, &q.xy2d)
	d.Add(&p.Z, &p.Z)
	e.Subtract(&b, &a)
	h.Add(&b, &a)
	if neg {
		f.Add(&d, &c)
		g.Subtract(&d, &c)
	} else {
		f.Subtract(&d, &c)
		g.Add(&d, &c)
	}
	p.X.Multiply(&e, &f)
	p.Y.Multiply(&g, &h)
	p.T.Multiply(&e, &h)
	p.Z.Multiply(&f, &g)
}

// addMul adds s·P to p, where t is P's table and s a scalar's canonical
// little-endian bytes (below 2^253): s is recoded in signed digits
// −128 … 127 of base 256, and each non-zero digit adds one table point.
func (p *ext) addMul(t *table, s []byte) {
	carry := 0
	for i := 0; i < positions; i++ {
		v := int(s[i]) + carry
		carry = 0
		if v >= entries {
			v -= 2 * entries
			carry = 1
		}
		switch {
		case v > 0:
			p.madd(&t[i][v-1], false)
		case v < 0:
			p.madd(&t[i][-v-1], true)
		}
	}
	// A canonical scalar is below 2^253: its top byte is at most 0x10, so
	// the last digit never carries.
}

// Key verifies signatures by one Ed25519 public key.
type Key struct {
	pub   [keySize]byte
	minus *table // multiples of −A
}

// ErrKey is returned by NewKey for a key crypto/ed25519.Verify would reject
// every signature of (not 32 bytes, or not a point).
var ErrKey = errors.New("edverify: not an Ed25519 public key")

// NewKey decodes pub as crypto/ed25519 does and builds its table.
func NewKey(pub []byte) (*Key, error) {
	if len(pub) != keySize {
		return nil, ErrKey
	}
	a, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return nil, ErrKey
	}
	k := &Key{minus: newTable(new(edwards25519.Point).Negate(a))}
	copy(k.pub[:], pub)
	base()
	return k, nil
}

// Verify reports whether sig is a valid signature of msg by the key, with
// the verdict of crypto/ed25519.Verify.
func (k *Key) Verify(msg, sig []byte) bool {
	if len(sig) != sigSize || sig[63]&224 != 0 {
		return false
	}
	h := sha512.New()
	h.Write(sig[:32])
	h.Write(k.pub[:])
	h.Write(msg)
	var digest [64]byte
	kk, err := new(edwards25519.Scalar).SetUniformBytes(h.Sum(digest[:0]))
	if err != nil {
		return false
	}
	s, err := new(edwards25519.Scalar).SetCanonicalBytes(sig[32:])
	if err != nil {
		return false
	}
	p := &ext{}
	p.Y.One()
	p.Z.One()
	p.addMul(base(), s.Bytes())
	p.addMul(k.minus, kk.Bytes())
	r, err := new(edwards25519.Point).SetExtendedCoordinates(&p.X, &p.Y, &p.Z, &p.T)
	if err != nil {
		return false // cannot happen: every step stays on the curve
	}
	return bytes.Equal(r.Bytes(), sig[:32])
}
