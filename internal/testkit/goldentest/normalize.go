package goldentest

import (
	"sort"
	"strings"
)

// Normalizer replaces what differs from one run or machine to the next
// (temporary directories, the host name, versions, times) with fixed
// placeholders, so the output can be compared with a golden file.
type Normalizer struct {
	pairs [][2]string
}

// Replace adds a replacement of every occurrence of old by placeholder.
// An empty old is ignored. The longest olds are replaced first, so a
// directory inside another is replaced by its own placeholder.
func (n *Normalizer) Replace(old, placeholder string) {
	if old == "" {
		return
	}
	n.pairs = append(n.pairs, [2]string{old, placeholder})
}

// Apply returns s with every replacement made.
func (n *Normalizer) Apply(s string) string {
	pairs := append([][2]string(nil), n.pairs...)
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i][0]) > len(pairs[j][0]) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p[0], p[1])
	}
	return strings.NewReplacer(args...).Replace(s)
}
