package nginx

import (
	"fmt"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/model/knob"
)

// UpstreamName is the upstream block PHP requests go through when php-fpm
// runs several pools or nginx keeps FastCGI connections.
const UpstreamName = "php_fpm"

// UpstreamServerParams mark a pool's server in the upstream: a pool is
// taken out of the rotation after 3 failed connects within a second, and
// for a second. nginx's own defaults (1 failure, 10 s) take a pool out for ten
// seconds on one full backlog (EAGAIN) and, at overload, all of them
// ("no live upstreams"): a short window sends the next requests to the
// other pools (fastcgi_next_upstream error already retries a failed
// connect on the next pool) without starving a pool that only queued.
const UpstreamServerParams = "max_fails=3 fail_timeout=1s"

// writeUpstream writes the upstream block of s's PHP pools when cfg asks
// for one (fpm.pools above 1, or nginx.fastcgi_keepalive above 0) and
// returns what the PHP location passes to, and whether it keeps its
// FastCGI connections (fastcgi_keep_conn on). Without either knob it
// writes nothing and PHP goes to s.FastCGI as before.
func writeUpstream(w func(string, ...any), cfg knob.Config, s Site) (pass string, keepConn bool, err error) {
	kept := cfg.Int(knob.FastCGIKeepaliveKnob)
	pools := s.FastCGIPools
	if len(pools) == 0 {
		pools = []string{s.FastCGI}
	}
	if n := cfg.Pools(); n != len(pools) {
		return "", false, fmt.Errorf("nginx upstream: %s=%d needs %d php-fpm addresses, got %d", knob.PoolsKnob, n, n, len(pools))
	}
	if len(pools) == 1 && kept == 0 {
		pass, err := fastCGIPass(pools[0])
		return pass, false, err
	}
	w("    upstream %s {", UpstreamName)
	for _, addr := range pools {
		server, err := upstreamServer(addr)
		if err != nil {
			return "", false, err
		}
		if len(pools) > 1 {
			w("        server %s %s;", server, UpstreamServerParams)
		} else {
			w("        server %s;", server)
		}
	}
	if kept > 0 {
		// Per worker process; php-fpm holds a worker per kept connection
		// (knob.Config.Validate keeps them within every pool).
		w("        keepalive %d;", kept)
	}
	w("    }")
	return UpstreamName, kept > 0, nil
}

// upstreamServer is addr ("unix:/path" or host:port) as an upstream
// server: nginx reads no variables there, so a socket path is quoted as
// a literal.
func upstreamServer(addr string) (string, error) {
	return quotedAddr("upstream server", addr, confpath.NginxLiteral)
}
