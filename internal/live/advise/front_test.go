package advise

import (
	"strings"
	"testing"
)

func TestFrontFindings(t *testing.T) {
	www := PoolSocket{Master: "/etc/php/8.2/fpm/php-fpm.conf", Pool: "www", Listen: "unix:/run/php/php8.2-fpm.sock", MaxChildren: 50}
	shop := PoolSocket{Master: "/etc/php/8.2/fpm/php-fpm.conf", Pool: "shop", Listen: "tcp:127.0.0.1:9001", MaxChildren: 20}
	ng := WebServer{Kind: "nginx", Conf: "/etc/nginx/nginx.conf", Workers: 2, WorkerConnections: 40, KeepaliveTimeout: "65",
		Listens: []Listen{{Addr: "80", Backlog: 511, At: "/etc/nginx/sites-enabled/default:22"}},
		Passes:  []Pass{{Server: "_", Listen: []string{"80"}, Target: "unix:/run/php/php8.2-fpm.sock", Addrs: []string{"unix:/run/php/php8.2-fpm.sock"}, At: "/etc/nginx/sites-enabled/default:60"}}}
	for _, tc := range []struct {
		name      string
		pools     []PoolSocket
		servers   []WebServer
		somaxconn int64
		want      []string // substrings of findings, in order
	}{
		{"pool passed to, one unused, nginx too small, backlog capped", []PoolSocket{www, shop}, []WebServer{ng}, 128, []string{
			"info: www: passed to by nginx _ (listen 80) at /etc/nginx/sites-enabled/default:60",
			"warning: shop: no web server found passes requests to its socket tcp:127.0.0.1:9001 (they pass to: nginx → unix:/run/php/php8.2-fpm.sock)",
			"warning: : nginx (/etc/nginx/nginx.conf) can hold 80 connections (2 workers x worker_connections 40), 40 proxied requests at once",
			"raise worker_connections to at least 50",
			"warning: : nginx's listen 80 (/etc/nginx/sites-enabled/default:22): backlog asked 511, capped at 128 by somaxconn"}},
		{"no server found", []PoolSocket{www}, nil, -1, []string{"info: : no running nginx or Apache was found"}},
		{"upstream keepalive without fastcgi_keep_conn", []PoolSocket{www}, []WebServer{{Kind: "nginx", Workers: 1, WorkerConnections: 768,
			Passes: []Pass{{Server: "a", Target: "php", Addrs: []string{www.Listen}, UpstreamKeepalive: 4, At: "f:2"}}}}, 4096,
			[]string{"warning: www: nginx's upstream php keeps idle connections (keepalive 4) but fastcgi_keep_conn is off at f:2"}},
		{"fastcgi_keep_conn without upstream keepalive", []PoolSocket{www}, []WebServer{{Kind: "nginx", Workers: 1, WorkerConnections: 768,
			Passes: []Pass{{Server: "a", Target: "unix:/run/php/php8.2-fpm.sock", Addrs: []string{www.Listen}, KeepConn: true, At: "f:3"}}}}, 4096,
			[]string{"info: www: fastcgi_keep_conn on at f:3 without an upstream keepalive"}},
		{"upstream keepalive holds more than the pool", []PoolSocket{{Pool: "www", Listen: "unix:/s", MaxChildren: 5}},
			[]WebServer{{Kind: "nginx", Workers: 4, WorkerConnections: 768, Passes: []Pass{{Server: "a", Addrs: []string{"unix:/s"}, UpstreamKeepalive: 8, At: "f:1"}}}}, 4096,
			[]string{"warning: www: nginx keeps up to 8 idle connections per worker to it (upstream keepalive 8 x 4 workers = 32), more than its pm.max_children 5", "info: www: passed to by nginx a at f:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fs := FrontFindings(tc.pools, tc.servers, tc.somaxconn)
			var all []string
			for _, f := range fs {
				all = append(all, f.Severity+": "+f.Pool+": "+f.Message)
			}
			text := strings.Join(all, "\n")
			at := 0
			for _, w := range tc.want {
				i := strings.Index(text[at:], w)
				if i < 0 {
					t.Fatalf("lacks (in order) %q:\n%s", w, text)
				}
				at += i
			}
		})
	}
}
