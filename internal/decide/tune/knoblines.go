package tune

import "github.com/phptune/phptune/internal/model/knob"

// KnobLines lists every knob of c as "name = value", one per line in the
// registry's order, so that a diff of two configs shows each change with
// its neighbours as context (as the seed's www.conf diff did).
func KnobLines(c knob.Config) []string {
	var out []string
	for _, k := range knob.All() {
		out = append(out, k.Name+" = "+c[k.Name])
	}
	return out
}
