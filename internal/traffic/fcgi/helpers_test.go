package fcgi

// Functions only this package's tests use.

// DecodePairs decodes a name-value pair stream (the content of PARAMS or
// GET_VALUES_RESULT). It never allocates more than len(b) for the strings.
func DecodePairs(b []byte) ([]Pair, error) {
	var out []Pair
	for len(b) > 0 {
		var nl, vl int
		var err error
		if nl, b, err = readLen(b); err != nil {
			return out, err
		}
		if vl, b, err = readLen(b); err != nil {
			return out, err
		}
		if nl > len(b) || vl > len(b)-nl {
			return out, protoErr("name-value pair longer than its record (%d+%d > %d)", nl, vl, len(b))
		}
		out = append(out, Pair{string(b[:nl]), string(b[nl : nl+vl])})
		b = b[nl+vl:]
	}
	return out, nil
}

func readLen(b []byte) (int, []byte, error) {
	if len(b) == 0 {
		return 0, b, protoErr("truncated name-value length")
	}
	if b[0] < 128 {
		return int(b[0]), b[1:], nil
	}
	if len(b) < 4 {
		return 0, b, protoErr("truncated 4-byte name-value length")
	}
	return int(b[0]&0x7f)<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3]), b[4:], nil
}
