package restate

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func testKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, contentKeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// A sealed field opens to its plaintext under the same ring, holds no
// plaintext, takes a fresh nonce each time, and tells its plaintext's
// size without a key; an unsealed one passes as is.
func TestSealRoundTrip(t *testing.T) {
	r := newKeyRing(testKey(t), nil)
	const secret = "CANARY-SEAL-7f3a: the child's words"
	for _, field := range []string{fieldInput, fieldOutput, fieldGuidance, fieldUpdate, fieldHandle} {
		s1, err := r.sealString("w1", field, secret)
		if err != nil {
			t.Fatal(err)
		}
		s2, _ := r.sealString("w1", field, secret)
		if s1 == s2 {
			t.Errorf("%s: two seals of one plaintext are equal (no fresh nonce)", field)
		}
		if strings.Contains(s1, "CANARY") || !strings.HasPrefix(s1, sealedPrefix) {
			t.Errorf("%s: sealed string %q", field, s1)
		}
		if got, err := r.openString("w1", field, s1); err != nil || got != secret {
			t.Errorf("%s: openString = %q, %v", field, got, err)
		}
		if n := plainLen(s1); n != len(secret) {
			t.Errorf("%s: plainLen = %d, want %d", field, n, len(secret))
		}
		b, err := r.sealBytes("w1", field, []byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("CANARY")) {
			t.Errorf("%s: sealed bytes hold the plaintext", field)
		}
		if got, err := r.openBytes("w1", field, b); err != nil || string(got) != secret {
			t.Errorf("%s: openBytes = %q, %v", field, got, err)
		}
		if n := plainLenBytes(b); n != len(secret) {
			t.Errorf("%s: plainLenBytes = %d, want %d", field, n, len(secret))
		}
	}
	if got, err := r.openString("w1", fieldInput, "plain"); err != nil || got != "plain" {
		t.Errorf("an unsealed string: %q, %v", got, err)
	}
	if got, err := r.openString("w1", fieldInput, sealedPrefix+"!not base64"); err != nil || got != sealedPrefix+"!not base64" {
		t.Errorf("a string with the marker and no envelope: %q, %v", got, err)
	}
	if got, err := r.openBytes("w1", fieldUpdate, []byte(`{"a":1}`)); err != nil || string(got) != `{"a":1}` {
		t.Errorf("unsealed bytes: %q, %v", got, err)
	}
	var none *keyRing
	if s, err := none.sealString("w1", fieldInput, secret); err != nil || s != secret {
		t.Errorf("no ring seals nothing: %q, %v", s, err)
	}
}

// An envelope opens only for its Work and field, unaltered, under a key
// the ring holds; else ErrUndecryptable, never a value.
func TestSealRefusals(t *testing.T) {
	a, b := testKey(t), testKey(t)
	ringA := newKeyRing(a, nil)
	sealed, err := ringA.sealString("w1", fieldOutput, "result")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := sealedStringBody(sealed)
	tampered := bytes.Clone(body)
	tampered[len(tampered)-1] ^= 1
	tamperedBytes := append(bytes.Clone(sealedMagic), tampered...)
	sealedBytes, _ := ringA.sealBytes("w1", fieldHandle, []byte("h"))
	for _, tc := range []struct {
		name  string
		open  func() (string, error)
		cause string
	}{
		{"another Work", func() (string, error) { return ringA.openString("w2", fieldOutput, sealed) }, "does not authenticate"},
		{"another field", func() (string, error) { return ringA.openString("w1", fieldInput, sealed) }, "does not authenticate"},
		{"altered", func() (string, error) {
			p, err := ringA.openBytes("w1", fieldOutput, tamperedBytes)
			return string(p), err
		}, "does not authenticate"},
		{"a key the ring does not hold", func() (string, error) { return newKeyRing(b, nil).openString("w1", fieldOutput, sealed) }, "which the ring does not hold"},
		{"no ring", func() (string, error) { return (*keyRing)(nil).openString("w1", fieldOutput, sealed) }, "no key ring"},
		{"no ring, bytes", func() (string, error) {
			p, err := (*keyRing)(nil).openBytes("w1", fieldHandle, sealedBytes)
			return string(p), err
		}, "no key ring"},
		{"an invalid ring", func() (string, error) { return newKeyRing(a[:16], nil).openString("w1", fieldOutput, sealed) }, "32"},
	} {
		got, err := tc.open()
		if !errors.Is(err, ErrUndecryptable) || !strings.Contains(err.Error(), tc.cause) || got != "" {
			t.Errorf("%s: %q, %v; want ErrUndecryptable (%s) and no value", tc.name, got, err, tc.cause)
		}
	}
}

// Rotation: content sealed under A opens with B current and A older; new
// content is sealed under B; once A is dropped, A's content is
// ErrUndecryptable naming A's key id, B's still opens.
func TestSealRotation(t *testing.T) {
	a, b := testKey(t), testKey(t)
	underA, _ := newKeyRing(a, nil).sealString("w1", fieldOutput, "old")
	rotated := newKeyRing(b, [][]byte{a})
	if got, err := rotated.openString("w1", fieldOutput, underA); err != nil || got != "old" {
		t.Fatalf("A's content under (B, A): %q, %v", got, err)
	}
	underB, _ := rotated.sealString("w1", fieldOutput, "new")
	if _, err := newKeyRing(a, nil).openString("w1", fieldOutput, underB); !errors.Is(err, ErrUndecryptable) {
		t.Errorf("the rotated ring does not seal under B: A opens it (%v)", err)
	}
	onlyB := newKeyRing(b, nil)
	if got, err := onlyB.openString("w1", fieldOutput, underB); err != nil || got != "new" {
		t.Errorf("B's content under (B): %q, %v", got, err)
	}
	idA := keyID(a)
	if _, err := onlyB.openString("w1", fieldOutput, underA); !errors.Is(err, ErrUndecryptable) ||
		!strings.Contains(err.Error(), fmt.Sprintf("%x", idA)) {
		t.Errorf("A's content once A is dropped: %v; want ErrUndecryptable naming key id %x", err, idA)
	}
}

// A key that is not 32 bytes makes a ring that seals nothing.
func TestInvalidContentKey(t *testing.T) {
	for _, n := range []int{0, 16, 24, 33} {
		r := newKeyRing(make([]byte, n), nil)
		if s, err := r.sealString("w", fieldInput, "x"); err == nil || s != "" {
			t.Errorf("a %d-byte key sealed: %q, %v", n, s, err)
		}
		if _, err := r.sealBytes("w", fieldInput, []byte("x")); err == nil {
			t.Errorf("a %d-byte key sealed bytes", n)
		}
	}
	if r := newKeyRing(make([]byte, 32), [][]byte{make([]byte, 31)}); r.err == nil {
		t.Error("an invalid older key is accepted")
	}
}

// BenchmarkSealOpen is the sealing's own cost: one 1 KiB field sealed and
// opened (a Work's input or output takes one of each).
func BenchmarkSealOpen(b *testing.B) {
	k := make([]byte, contentKeySize)
	if _, err := rand.Read(k); err != nil {
		b.Fatal(err)
	}
	r := newKeyRing(k, nil)
	p := strings.Repeat("0123456789abcdef", 64)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		s, err := r.sealString("w", fieldOutput, p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.openString("w", fieldOutput, s); err != nil {
			b.Fatal(err)
		}
	}
}
