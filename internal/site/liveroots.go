package site

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/livehost"
	"github.com/phptune/phptune/internal/proc"
)

// LiveRoot is a directory a live web server of the host serves a site
// from.
type LiveRoot struct {
	Dir string
	// Site names it as --site takes it: the vhost's first server name, or
	// the root itself.
	Site string
	// Where is the server and where the root is set ("nginx vhost in
	// /etc/nginx/sites-enabled/site:3").
	Where string
}

// LiveRoots lists the document roots of the host's live sites: the root
// of every vhost of the running nginx master (nginx -T, as Discover reads
// it) and every DocumentRoot of Apache's enabled configuration. A host
// whose nginx does not run has no nginx roots; one without apache2.conf
// no Apache roots. Roots that hold a variable are left out.
func LiveRoots(ctx context.Context, h Host) ([]LiveRoot, error) {
	if h.Root == "" {
		h.Root = "/"
	}
	if h.FS == nil {
		fs, err := proc.Default()
		if err != nil {
			return nil, err
		}
		h.FS = fs
	}
	var out []LiveRoot
	if ng, prefix, err := h.nginx(); err == nil {
		conf, err := ng.Dump(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading nginx's configuration: %w", err)
		}
		for _, v := range NginxVhosts(conf, prefix) {
			if v.Root == "" || v.RootVariable {
				continue
			}
			name := v.Root // --site takes the document root too
			if len(v.Names) > 0 && v.Names[0] != "" && v.Names[0] != "_" {
				name = v.Names[0]
			}
			out = append(out, LiveRoot{Dir: v.Root, Site: name, Where: fmt.Sprintf("nginx vhost in %s:%d", v.File, v.Line)})
		}
	}
	aroots, err := livehost.ApacheDocumentRoots(h.Root)
	if err != nil {
		return nil, fmt.Errorf("reading Apache's configuration: %w", err)
	}
	for _, r := range aroots {
		if !filepath.IsAbs(r.Dir) || strings.ContainsAny(r.Dir, "$%") {
			continue
		}
		out = append(out, LiveRoot{Dir: filepath.Clean(r.Dir), Site: filepath.Clean(r.Dir), Where: fmt.Sprintf("Apache DocumentRoot in %s:%d", r.File, r.Line)})
	}
	return out, nil
}

// Overlapping returns the live roots dir is, lies inside or contains:
// a lab serving dir in place would run that site's code (and, through its
// configuration, production's database).
func Overlapping(roots []LiveRoot, dir string) []LiveRoot {
	dir = filepath.Clean(dir)
	var out []LiveRoot
	for _, r := range roots {
		if within(dir, r.Dir) || within(r.Dir, dir) {
			out = append(out, r)
		}
	}
	return out
}

// within reports whether path is dir or lies inside it.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if dir == "/" {
		return true
	}
	return strings.HasPrefix(path, dir+"/")
}
