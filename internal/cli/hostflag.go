package cli

import "github.com/phptune/phptune/internal/traffic/load"

// hostFlagHelp is --host's help, the same for bench, tune, compare and
// capacity.
const hostFlagHelp = "the Host header every request and the page check carry: your site's own `NAME` (e.g. site.test), so that a site whose home URL names it answers its pages instead of redirecting there; default: the lab's address"

// checkHostFlag checks --host: a host name or host:port, nothing that
// could end the header line.
func checkHostFlag(h string) error {
	if h == "" {
		return nil
	}
	if err := load.CheckHost(h); err != nil {
		return usageErr("Try: --host site.test (a name of your vhost's server_name)", "--host: %v", err)
	}
	return nil
}
