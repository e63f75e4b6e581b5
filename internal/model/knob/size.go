package knob

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Binary size units.
const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// ParseSize reads sizes such as 512, 64K, 128M, 1G (powers of 1024, like
// php.ini and my.cnf).
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty size")
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = kib
	case 'm', 'M':
		mult = mib
	case 'g', 'G':
		mult = gib
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a number with an optional K, M or G", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// FormatSize writes n in the largest unit that divides it exactly.
func FormatSize(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%gib == 0:
		return strconv.FormatInt(n/gib, 10) + "G"
	case n%mib == 0:
		return strconv.FormatInt(n/mib, 10) + "M"
	case n%kib == 0:
		return strconv.FormatInt(n/kib, 10) + "K"
	}
	return strconv.FormatInt(n, 10)
}
