package stephash

import (
	"encoding/binary"
	"math/bits"
)

// sip128 is SipHash-2-4 with a 128-bit output (Aumasson and Bernstein,
// "SipHash: a fast short-input PRF"; the 128-bit variant of the reference
// implementation), as a streaming hash.Hash. It is a keyed pseudorandom
// function: without the key, a digest neither reveals its input nor lets
// anyone test guesses of it.
type sip128 struct {
	k0, k1         uint64
	v0, v1, v2, v3 uint64
	tail           [8]byte
	ntail          int
	n              uint64 // bytes written
}

func newSip128(key [16]byte) *sip128 {
	s := &sip128{k0: binary.LittleEndian.Uint64(key[:8]), k1: binary.LittleEndian.Uint64(key[8:])}
	s.Reset()
	return s
}

func (s *sip128) Reset() {
	s.v0 = s.k0 ^ 0x736f6d6570736575
	s.v1 = s.k1 ^ 0x646f72616e646f6d ^ 0xee // 0xee: 128-bit output
	s.v2 = s.k0 ^ 0x6c7967656e657261
	s.v3 = s.k1 ^ 0x7465646279746573
	s.ntail, s.n = 0, 0
}

func (s *sip128) Size() int      { return 16 }
func (s *sip128) BlockSize() int { return 8 }

func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13)
	v1 ^= v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16)
	v3 ^= v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21)
	v3 ^= v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17)
	v1 ^= v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}

// blocks compresses whole 8-byte words of p.
func (s *sip128) blocks(p []byte) {
	v0, v1, v2, v3 := s.v0, s.v1, s.v2, s.v3
	for len(p) >= 8 {
		m := binary.LittleEndian.Uint64(p)
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
		p = p[8:]
	}
	s.v0, s.v1, s.v2, s.v3 = v0, v1, v2, v3
}

func (s *sip128) Write(p []byte) (int, error) {
	n := len(p)
	s.n += uint64(n)
	if s.ntail > 0 {
		c := copy(s.tail[s.ntail:], p)
		s.ntail += c
		p = p[c:]
		if s.ntail < 8 {
			return n, nil
		}
		s.blocks(s.tail[:])
		s.ntail = 0
	}
	whole := len(p) &^ 7
	s.blocks(p[:whole])
	s.ntail = copy(s.tail[:], p[whole:])
	return n, nil
}

// Sum appends the 16-byte digest (h0 then h1, little-endian, as the
// reference implementation outputs it) to b. It does not change s.
func (s *sip128) Sum(b []byte) []byte {
	var last [8]byte
	copy(last[:], s.tail[:s.ntail])
	last[7] = byte(s.n)
	m := binary.LittleEndian.Uint64(last[:])
	v0, v1, v2, v3 := s.v0, s.v1, s.v2, s.v3
	v3 ^= m
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0 ^= m
	v2 ^= 0xee
	for i := 0; i < 4; i++ {
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	}
	h0 := v0 ^ v1 ^ v2 ^ v3
	v1 ^= 0xdd
	for i := 0; i < 4; i++ {
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	}
	h1 := v0 ^ v1 ^ v2 ^ v3
	b = binary.LittleEndian.AppendUint64(b, h0)
	return binary.LittleEndian.AppendUint64(b, h1)
}
