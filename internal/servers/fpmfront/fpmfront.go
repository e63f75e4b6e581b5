// Package fpmfront holds what Caddy, h2o and lighttpd share when a lab runs
// one of them in front of php-fpm: the fields of the site each renders
// (its logs, its address, the document root, php-fpm's address and the
// paths passed to it), and the check that a site can be rendered at all.
package fpmfront

import "github.com/phptune/phptune/internal/model/knob"

// Site is the part of a server's site that every server in front of
// php-fpm has; each server's own Site embeds it beside its own fields.
type Site struct {
	ErrorLog  string // the server's own log
	AccessLog string
	Listen    string // 127.0.0.1:PORT
	DocRoot   string
	// FastCGI is php-fpm's address: "unix:/path" or "127.0.0.1:9000".
	FastCGI string
	// FrontController, when set ("/index.php"), receives every request for
	// a path that is not a file, as WordPress's pretty permalinks need; how
	// each server routes it is said by its own package.
	FrontController string
	// FPMStatusPath and FPMPingPath are passed to php-fpm (loopback only).
	FPMStatusPath string
	FPMPingPath   string
}

// Check renders s with knob's defaults and returns only the error: the
// first path or address of s that the server's file cannot carry, so that
// a caller can refuse the site before anything starts.
func Check[S any](render func(knob.Config, S) (string, error), s S) error {
	_, err := render(knob.Defaults(), s)
	return err
}
