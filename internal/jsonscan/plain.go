package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// The byte scans of Str and key, the loops a streamed chunk spends most
// of its parsing in.

// Eight bytes at a time, the masks of plainHigh and asciiRun: each
// byte's high bit, each byte 1, and each byte the character of its name.
const (
	highs    = 0x8080808080808080
	ones     = 0x0101010101010101
	quotes   = '"' * ones
	slashes  = '\\' * ones
	controls = 0x20 * ones
)

// plainHigh returns where the run of bytes at b[j:] that Str passes over
// (no quote, backslash or control byte) ends, len(b) if it does not, and
// whether a byte it passed over is past ASCII (0x80 or more): a string
// without one is valid UTF-8 as it is, which spares its reader a second
// pass (utf8.Valid was a thirtieth of a long session's load). It reads
// eight bytes at a time. In a word, a byte is zero after XOR with '"' (or
// '\\') exactly when it is one, and (v-ones)&^v&highs sets the high bit of
// the first zero byte of v (bits above it may be set by the borrow, which
// the lowest set bit is not); (x-controls)&^x&highs does the same for the
// first byte below 0x20. The lowest bit set of the three is the first
// byte Str must look at; the bytes of its word before it are ORed into
// what was passed over, those after it are another token's.
func plainHigh(b []byte, j int) (int, bool) {
	var seen uint64 // the bytes passed over, ORed
	for ; j+8 <= len(b); j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		q, bs := x^quotes, x^slashes
		if m := ((q-ones)&^q | (bs-ones)&^bs | (x-controls)&^x) & highs; m != 0 {
			n := bits.TrailingZeros64(m) >> 3
			seen |= x & (1<<(8*n) - 1)
			return j + n, seen&highs != 0
		}
		seen |= x
	}
	for ; j < len(b); j++ {
		c := b[j]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		seen |= uint64(c)
	}
	return j, seen&highs != 0
}

// asciiRun returns where the run of bytes at b[j:] that an unquote
// copies as they are (ASCII, no backslash) ends: len(b) if it does not.
// It reads eight bytes at a time as plainHigh does, a byte past ASCII being
// marked by its own high bit. Copying texts byte by byte was a tenth of
// loading a session whose messages have newlines and quotes.
func asciiRun(b []byte, j int) int {
	for ; j+8 <= len(b); j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		bs := x ^ slashes
		if m := ((bs-ones)&^bs | x) & highs; m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for ; j < len(b) && b[j] != '\\' && b[j] < 0x80; j++ {
	}
	return j
}

// keyByte marks the bytes key accepts.
var keyByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	return t
}()
