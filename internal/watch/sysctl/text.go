package sysctl

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
)

// Lines renders a result's kernel limits for the text summaries of bench
// and tune: the settings, the open-file limits, the backlogs asked and
// given, and what --apply-sysctl raised. Nil gives nothing.
func Lines(k *results.KernelLimits) []string {
	if k == nil {
		return nil
	}
	v := Values(k.Sysctl)
	var out, parts []string
	for _, n := range Names {
		s, ok := v[n]
		if !ok {
			continue
		}
		if n == PortRange {
			if lo, hi, ok := v.Ports(); ok {
				s = fmt.Sprintf("%d-%d (%d ports)", lo, hi, hi-lo+1)
			}
		}
		parts = append(parts, short(n)+" "+s)
	}
	if len(parts) > 0 {
		out = append(out, "sysctl: "+strings.Join(parts, ", "))
	}
	parts = parts[:0]
	for _, l := range k.NoFile {
		parts = append(parts, fmt.Sprintf("%s %s/%s", l.Process, limitText(l.Soft), limitText(l.Hard)))
	}
	if len(parts) > 0 {
		out = append(out, "open files (RLIMIT_NOFILE soft/hard): "+strings.Join(parts, ", "))
	}
	for _, b := range k.Backlogs {
		out = append(out, fmt.Sprintf("%s: %s", b.Knob, BacklogText(b.Asked, b.Somaxconn)))
	}
	if len(k.Applied) > 0 {
		parts = parts[:0]
		for _, c := range k.Applied {
			parts = append(parts, fmt.Sprintf("%s %s -> %s", c.Name, c.From, c.To))
		}
		out = append(out, "--apply-sysctl raised for this run only (restored at its end): "+strings.Join(parts, ", "))
	}
	for _, e := range k.Errors {
		out = append(out, "not read: "+e)
	}
	return out
}

// short drops the settings' well-known prefixes.
func short(name string) string {
	for _, p := range []string{"net.core.", "net.ipv4."} {
		if s, ok := strings.CutPrefix(name, p); ok {
			return s
		}
	}
	return name
}

func limitText(n int64) string {
	if n < 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}
