// Package cpulist reads CPU lists as taskset and /sys write them ("0",
// "1,3", "0-2,5"): the --cpus of bench and of a lab, and the kernel's list
// of online CPUs.
package cpulist

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// onlinePath is where the kernel lists the online CPUs.
const onlinePath = "/sys/devices/system/cpu/online"

// Parse reads a CPU list: spaces around a part ignored; every CPU in
// [0, 1023], each once, in the list's order. It is phptune's one reader
// of CPU lists.
func Parse(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("CPU list %q is empty: give a CPU list such as 0 or 0-1,3", s)
	}
	var cpus []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= 1024 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number or range in 0-1023 such as 0 or 2-3", s, part)
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				cpus = append(cpus, c)
			}
		}
	}
	return cpus, nil
}

// Online returns the machine's online CPUs and the kernel's text of them
// ("0-3"), or an error when the list cannot be read or parsed.
func Online() (cpus []int, text string, err error) {
	b, err := os.ReadFile(onlinePath)
	if err != nil {
		return nil, "", err
	}
	text = strings.TrimSpace(string(b))
	cpus, err = Parse(text)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", onlinePath, err)
	}
	return cpus, text, nil
}
