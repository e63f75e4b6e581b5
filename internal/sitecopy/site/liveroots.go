package site

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/watch/proc"
)

// LiveRoot is a directory a live web server of the host serves a site
// from.
type LiveRoot struct {
	Dir string
	// Site names it as --site takes it: the vhost's first server name, or
	// the root itself.
	Site string
	// Where is the server and where the root is set ("nginx vhost in
	// /etc/nginx/sites-enabled/site:3", "php-fpm pool panel in
	// /etc/php/8.2/fpm/pool.d/panel.conf (chdir)").
	Where string
	// Pool is the php-fpm pool's name when the root is a pool's chdir or
	// doc_root rather than a vhost's document root.
	Pool string
}

// LiveRoots lists the document roots of the host's live sites: the root
// of every vhost of the running nginx master (nginx -T, as Discover reads
// it), every DocumentRoot of Apache's enabled configuration, and the
// directories the pools of the running php-fpm masters serve from (their
// chdir and doc_root: PoolRoots) — a hosting panel's pool serves code
// that no vhost of nginx or Apache names. A host whose nginx does not
// run has no nginx roots; one without apache2.conf no Apache roots.
// Roots that hold a variable are left out.
func LiveRoots(ctx context.Context, h Host) ([]LiveRoot, error) {
	if h.Root == "" {
		h.Root = "/"
	}
	if h.FS == nil {
		pfs, err := proc.Default()
		if err != nil {
			return nil, err
		}
		h.FS = pfs
	}
	var out []LiveRoot
	var vhosts []Vhost
	if ng, prefix, err := h.nginx(); err == nil {
		conf, err := ng.Dump(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading nginx's configuration: %w", err)
		}
		vhosts = NginxVhosts(conf, prefix)
		for _, v := range vhosts {
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
	masters, err := livehost.Masters(h.FS)
	if err != nil {
		return nil, fmt.Errorf("listing the running php-fpm masters: %w", err)
	}
	for _, m := range masters {
		fh, err := livehost.ReadFPM(m.Conf, h.FPMPrefix)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a master whose configuration was removed while it runs serves nothing new
		}
		if err != nil {
			return nil, fmt.Errorf("reading the configuration of php-fpm master %d (%s), to know which directories its pools serve: %w; fix that file (php-fpm -t checks it) or stop that master", m.PID, m.Conf, err)
		}
		out = append(out, PoolRoots(fh, vhosts)...)
	}
	return out, nil
}

// poolRootKeys are the pool settings that name a directory the pool
// serves code from: chdir (the workers' working directory, where a
// panel's pool keeps its scripts) and PHP's doc_root (the only directory
// the CGI/FPM SAPI runs scripts from when set).
var poolRootKeys = []string{"chdir", "php_admin_value[doc_root]", "php_value[doc_root]"}

// PoolRoots returns the directories the pools of one php-fpm master
// serve from: each pool's chdir and doc_root (php_admin_value or
// php_value), inside the pool's chroot when it has one. A pool with
// chdir / (php-fpm's own default under a chroot) is left out: it names
// no site's directory, and every --docroot would lie inside it. Site is
// the first name of a vhost of vhosts that passes PHP to the pool's
// listen address, else the directory itself (--site takes either).
func PoolRoots(fh *livehost.FPMHost, vhosts []Vhost) []LiveRoot {
	var out []LiveRoot
	for _, p := range fh.Pools {
		chroot := p.Settings["chroot"]
		if chroot != "" && (!filepath.IsAbs(chroot) || strings.ContainsAny(chroot, "$%")) {
			chroot = ""
		}
		seen := map[string]bool{}
		for _, k := range poolRootKeys {
			dir := p.Settings[k]
			if dir == "" || !filepath.IsAbs(dir) || strings.ContainsAny(dir, "$%") {
				continue
			}
			dir = filepath.Clean(filepath.Join("/", chroot, dir))
			if dir == "/" || seen[dir] {
				continue
			}
			seen[dir] = true
			name := dir
			for _, v := range vhosts {
				if v.RootVariable || len(v.Names) == 0 || v.Names[0] == "" || v.Names[0] == "_" {
					continue
				}
				if slices.Contains(v.FastCGI, p.Listen) {
					name = v.Names[0]
					break
				}
			}
			out = append(out, LiveRoot{Dir: dir, Site: name, Where: fmt.Sprintf("php-fpm pool %s in %s (%s)", p.Name, p.File, k), Pool: p.Name})
		}
	}
	return out
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
