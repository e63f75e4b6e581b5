package apache

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
)

// Fragment renders cfg's Apache knobs as a drop-in for a Debian host's
// /etc/apache2 (conf-available/, enabled with a2enconf): KeepAlive and its
// limits, and the MPM's process and thread settings inside <IfModule> of
// cfg's MPM, so the file does nothing under another MPM. Debian's
// apache2.conf includes conf-enabled/ after mods-enabled/mpm_*.conf and
// after its own KeepAlive lines, and for these directives the last one
// read wins, so the drop-in overrides Debian's values without editing its
// files. It is cfg's values only: no paths, modules or handlers, which
// stay the host's own.
//
// was, when non-nil, returns a comment for a knob ("" when unchanged),
// written on a line of its own above the knob's directive (Apache has no
// end-of-line comments); the recommendation uses it to say what a value
// replaces.
func Fragment(cfg knob.Config, was func(name string) string) string {
	if was == nil {
		was = func(string) string { return "" }
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	// d writes a directive with the knob's comment above it.
	d := func(indent, directive string, value any, name string) {
		if c := was(name); c != "" {
			w("%s%s", indent, c)
		}
		w("%s%s %v", indent, directive, value)
	}
	modPHP := !knob.RunsFPM(cfg.Server())
	d("", "KeepAlive", onOff(cfg.On("apache.keepalive")), "apache.keepalive")
	d("", "MaxKeepAliveRequests", cfg["apache.max_keepalive_requests"], "apache.max_keepalive_requests")
	d("", "KeepAliveTimeout", cfg["apache.keepalive_timeout"], "apache.keepalive_timeout")
	w("")
	if modPHP {
		w("<IfModule mpm_prefork_module>")
		d("    ", "StartServers", cfg["apache.prefork.start_servers"], "apache.prefork.start_servers")
		d("    ", "MinSpareServers", cfg["apache.prefork.min_spare_servers"], "apache.prefork.min_spare_servers")
		d("    ", "MaxSpareServers", cfg["apache.prefork.max_spare_servers"], "apache.prefork.max_spare_servers")
		d("    ", "ServerLimit", cfg["apache.prefork.server_limit"], "apache.prefork.server_limit")
	} else {
		threads := cfg.Int("apache.event.threads_per_child")
		w("<IfModule mpm_event_module>")
		d("    ", "StartServers", cfg["apache.event.start_servers"], "apache.event.start_servers")
		d("    ", "MinSpareThreads", cfg["apache.event.min_spare_threads"], "apache.event.min_spare_threads")
		d("    ", "MaxSpareThreads", cfg["apache.event.max_spare_threads"], "apache.event.max_spare_threads")
		d("    ", "ServerLimit", cfg["apache.event.server_limit"], "apache.event.server_limit")
		w("    ThreadLimit %d", max(64, threads))
		d("    ", "ThreadsPerChild", threads, "apache.event.threads_per_child")
	}
	d("    ", "MaxRequestWorkers", cfg["apache.max_request_workers"], "apache.max_request_workers")
	d("    ", "MaxConnectionsPerChild", cfg["apache.max_connections_per_child"], "apache.max_connections_per_child")
	w("</IfModule>")
	return b.String()
}
