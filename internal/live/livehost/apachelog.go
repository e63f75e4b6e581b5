package livehost

import "strings"

// ApacheAccessLog is one CustomLog directive: where Apache writes a
// vhost's (or every vhost's) access log.
type ApacheAccessLog struct {
	// File is the log's target as written (quotes removed, ${VAR}
	// expanded): a path, relative ones against ServerRoot, or a pipe
	// ("|/usr/bin/rotatelogs ..."), which is kept as written for the
	// reader to skip.
	File string `json:"file"`
	// Format is the LogFormat nickname ("combined", "vhost_combined",
	// "common") or the format string as written.
	Format string `json:"format"`
	// Conditional says the directive logs only some requests (env= or
	// expr=).
	Conditional bool   `json:"conditional,omitempty"`
	At          string `json:"at"`
}

// apacheCustomLog reads a CustomLog directive (name lower-cased) written
// at at: CustomLog FILE|PIPE FORMAT|NICKNAME [env=...|expr=...]. ok is
// false for any other directive and for one without a file and format
// (Apache refuses it).
func apacheCustomLog(at, name string, args []string) (ApacheAccessLog, bool) {
	if name != "customlog" || len(args) < 2 || args[0] == "" {
		return ApacheAccessLog{}, false
	}
	l := ApacheAccessLog{File: args[0], Format: args[1], At: at}
	if len(args) > 2 {
		c := strings.ToLower(args[2])
		l.Conditional = strings.HasPrefix(c, "env=") || strings.HasPrefix(c, "expr=")
	}
	return l, true
}
