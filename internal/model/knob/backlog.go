package knob

// BacklogKnobs are the knobs that set a listen(2) backlog. The kernel caps
// each at net.core.somaxconn when the socket starts listening, silently:
// the server is never told.
var BacklogKnobs = []string{"listen.backlog", "nginx.listen_backlog", "unit.listen_backlog", "lighttpd.listen_backlog"}

// ListenBacklog is one listening socket's backlog in a configuration.
type ListenBacklog struct {
	Knob  string
	Value int64
	// TCP marks a TCP listener, whose half-open connections
	// net.ipv4.tcp_max_syn_backlog also bounds (without SYN cookies).
	TCP bool
}

// Backlogs lists the listen backlogs that take effect with c's server:
// php-fpm's pool socket (TCP with listen=tcp) where php-fpm runs, and the
// web server's HTTP port for nginx, lighttpd and Unit. Apache's port keeps
// its own ListenBacklog (511), Caddy's and h2o's theirs, none of them a knob.
func (c Config) Backlogs() []ListenBacklog {
	var out []ListenBacklog
	for _, name := range BacklogKnobs {
		if _, ok := c[name]; !ok || !c.Relevant(name) {
			continue
		}
		out = append(out, ListenBacklog{Knob: name, Value: c.Int(name), TCP: name != "listen.backlog" || c["listen"] == "tcp"})
	}
	return out
}
