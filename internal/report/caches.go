package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/model/results"
)

// CachesText writes a run's line per cache server of a site lab's own
// (Bench.Caches): its hits, misses and hit ratio and its evictions over
// the measured part, the memory it held at the end of its cap, or why
// they were not read.
func CachesText(w io.Writer, caches []results.CacheUse, indent string) {
	for i, c := range caches {
		label := "Cache"
		if i > 0 {
			label = ""
		}
		name := "Memcached"
		if c.Kind == "redis" {
			name = "Redis"
		}
		what := name
		if len(c.Addrs) > 0 {
			what += " at " + termsafe.Line(strings.Join(c.Addrs, ", "))
		}
		if c.Error != "" {
			fmt.Fprintf(w, "%s%-12s %s: counters not read: %s\n", indent, label, what, termsafe.Line(c.Error))
			continue
		}
		ratio := "no lookups"
		if c.Hits+c.Misses > 0 {
			ratio = fmt.Sprintf("%.1f%% hit ratio", 100*c.HitRatio)
		}
		mem := fmt.Sprintf("%.1f MiB used", float64(c.UsedBytes)/(1<<20))
		if c.MaxBytes > 0 {
			mem += fmt.Sprintf(" of %.0f MiB", float64(c.MaxBytes)/(1<<20))
		}
		fmt.Fprintf(w, "%s%-12s %s: %d hits, %d misses (%s), %d evictions; %s\n", indent, label, what, c.Hits, c.Misses, ratio, c.Evictions, mem)
	}
}
