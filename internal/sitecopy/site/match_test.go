package site

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost"
)

// testConf is an nginx -T dump of several sites.
const testConf = `# configuration file /etc/nginx/nginx.conf:
events {}
http {
	include /etc/nginx/sites-enabled/*;
}

# configuration file /etc/nginx/sites-enabled/sites:
server {
	listen 80 default_server;
	listen [::]:80 default_server;
	server_name _;
	root /var/www/html;
}
server {
	listen 80;
	server_name site.test www.site.test;
	return 301 https://site.test$request_uri;
}
server {
	listen 443 ssl;
	server_name site.test www.site.test;
	root /var/www/site/;
	location ~ \.php$ { fastcgi_pass unix:/run/php/site.sock; }
}
server {
	listen 8080;
	server_name *.example.com;
	root /srv/example;
	location ~ \.php$ { fastcgi_pass 127.0.0.1:9001; }
}
server {
	listen 8080;
	server_name *.shop.example.com;
	root /srv/shop;
	location ~ \.php$ { fastcgi_pass 127.0.0.1:9002; }
}
server {
	listen 8080;
	server_name www.other.*;
	location / { root /srv/other; }
	location ~ \.php$ { fastcgi_pass unix:/run/php/other.sock; }
}
server {
	listen 8080;
	server_name ~^(?<tenant>[a-z]+)\.saas\.test$;
	root /srv/saas;
	location ~ \.php$ { fastcgi_pass unix:/run/php/saas.sock; }
}
server {
	listen 8080;
	server_name ~^.+\.saas\.test$;
	root /srv/saas2;
}
server {
	listen 8081;
	server_name blog.test;
	root /srv/shared;
	location ~ \.php$ { fastcgi_pass unix:/run/php/shared.sock; }
}
server {
	listen 8081;
	server_name news.test;
	root /srv/shared;
	location ~ \.php$ { fastcgi_pass unix:/run/php/shared.sock; }
}
server {
	listen 8082;
	server_name static.test;
	root /srv/static;
}
server {
	listen 8082;
	server_name static.test;
	root /srv/static2;
}
`

func testVhosts(t *testing.T) []Vhost {
	c, err := livehost.ParseNginxDump([]byte(testConf))
	if err != nil {
		t.Fatal(err)
	}
	return NginxVhosts(c, "")
}

func TestChooseVhost(t *testing.T) {
	vs := testVhosts(t)
	tests := []struct {
		query     string
		wantLine  int // the chosen server's line in sites; 0: an error
		wantErr   string
		wantHost  string
		wantTLS   bool
		wantFCGI  string
		wantAlsos int
	}{
		{query: "site.test", wantLine: 12, wantHost: "site.test", wantTLS: true, wantFCGI: "unix:/run/php/site.sock", wantAlsos: 1},
		{query: "WWW.Site.Test.", wantLine: 12, wantHost: "site.test", wantTLS: true, wantFCGI: "unix:/run/php/site.sock", wantAlsos: 1},
		{query: "site.test:443", wantLine: 12, wantHost: "site.test", wantTLS: true, wantFCGI: "unix:/run/php/site.sock", wantAlsos: 1},
		{query: "/var/www/site", wantLine: 12, wantHost: "site.test", wantTLS: true, wantFCGI: "unix:/run/php/site.sock"},
		{query: "a.example.com", wantLine: 18, wantFCGI: "tcp:127.0.0.1:9001"},
		// the longest leading wildcard wins
		{query: "x.shop.example.com", wantLine: 24, wantFCGI: "tcp:127.0.0.1:9002"},
		{query: "example.com", wantErr: `no vhost serves "example.com"`},
		{query: "www.other.org", wantLine: 30, wantFCGI: "unix:/run/php/other.sock"},
		{query: "/srv/other", wantLine: 30, wantFCGI: "unix:/run/php/other.sock"},
		// the first regular expression that matches
		{query: "acme.saas.test", wantLine: 36, wantFCGI: "unix:/run/php/saas.sock"},
		// a catch-all "_" default server is no site's name
		{query: "_", wantErr: "no vhost serves"},
		{query: "unknown.test", wantErr: "blog.test at /etc/nginx/sites-enabled/sites:47 (root /srv/shared)"},
		// several servers sharing a root: one site only when they have the same names
		{query: "/srv/shared", wantErr: `"/srv/shared" matches 2 vhosts that serve different sites`},
		{query: "blog.test", wantLine: 47, wantFCGI: "unix:/run/php/shared.sock"},
		// two servers of one name with different roots
		{query: "static.test", wantErr: "name one by a server name that only it has"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var m []int
			if IsDir(tt.query) {
				m = MatchDir(vs, tt.query)
			} else {
				m = MatchName(vs, tt.query)
			}
			i, same, err := Choose(vs, m, tt.query, IsDir(tt.query))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := vs[i]
			if v.Line != tt.wantLine || v.Host() != tt.wantHost && tt.wantHost != "" || v.TLS() != tt.wantTLS || len(same) != tt.wantAlsos {
				t.Errorf("chose %s (host %q tls %v, %d others), want line %d host %q tls %v %d others", v.At(), v.Host(), v.TLS(), len(same), tt.wantLine, tt.wantHost, tt.wantTLS, tt.wantAlsos)
			}
			if got := strings.Join(v.FastCGI, ","); got != tt.wantFCGI {
				t.Errorf("fastcgi %q, want %q", got, tt.wantFCGI)
			}
		})
	}
}

func TestNoMatchSuggestsWWW(t *testing.T) {
	vs := testVhosts(t)
	_, _, err := Choose(vs, MatchName(vs, "www.blog.test"), "www.blog.test", false)
	var nm *NoMatchError
	if !errors.As(err, &nm) || nm.Suggest != "blog.test" || !strings.Contains(err.Error(), `"blog.test" does: give that name`) {
		t.Fatalf("err = %v, want a suggestion of blog.test", err)
	}
}

func TestNginxVhostsRootsAndListens(t *testing.T) {
	vs := testVhosts(t)
	var roots []string
	for _, v := range vs {
		roots = append(roots, v.Root)
	}
	want := []string{"/var/www/html", "", "/var/www/site", "/srv/example", "/srv/shop", "/srv/other", "/srv/saas", "/srv/saas2", "/srv/shared", "/srv/shared", "/srv/static", "/srv/static2"}
	if !reflect.DeepEqual(roots, want) {
		t.Errorf("roots %q, want %q", roots, want)
	}
	if l := vs[0].Listens; len(l) != 2 || !l[0].DefaultServer || l[1].Port != 80 || l[0].TLS {
		t.Errorf("default server's listens %+v", l)
	}
	if vs[1].Return == "" {
		t.Error("the redirect-only server's return was not read")
	}
	if vs[2].Port() != 443 || !vs[2].TLS() {
		t.Errorf("TLS server: port %d tls %v", vs[2].Port(), vs[2].TLS())
	}
}
