package jsonscan

// plain8 reports that none of the eight bytes of w is a quote, a
// backslash or a control character (below 0x20): the bytes Str must look
// at one by one. Each test is the classic "has a zero byte" trick,
// (v - 0x01…) &^ v & 0x80…, which never misses one.
func plain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return (zero(w^(ones*'"')) | zero(w^(ones*'\\')) | (w-ones*0x20)&^w&highs) == 0
}
