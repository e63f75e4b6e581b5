package report

import (
	"fmt"
	"io"

	"github.com/phptune/phptune/internal/model/results"
)

// BlockedText writes what a sealed lab's processes tried to reach outside
// the lab during a run, refused by the seal, one destination a line, each
// line starting with indent; nothing when nothing tried.
func BlockedText(w io.Writer, blocked []results.Blocked, indent string) {
	for i, b := range blocked {
		label := "blocked:      "
		if i > 0 {
			label = "              "
		}
		times := "times"
		if b.Count == 1 {
			times = "time"
		}
		fmt.Fprintf(w, "%s%sthe lab tried to reach %s %s %d %s (refused by the seal)\n", indent, label, b.Proto, b.Dest, b.Count, times)
	}
}
