package site

import (
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost"
)

// wordOpsLike is a WordPress vhost as page-caching hosts write it: a
// FastCGI page cache, static files with long expiry, a blocked path, an
// httpoxy guard, an application secret passed as a FastCGI parameter.
const wordOpsLike = `# configuration file /etc/nginx/nginx.conf:
http {
	fastcgi_cache_path /var/run/nginx-cache levels=1:2 keys_zone=WORDPRESS:50m;
	server {
		listen 80;
		listen 443 ssl http2;
		ssl_certificate /etc/ssl/site.pem;
		server_name blog.test;
		root /var/www/blog;
		index index.php;
		gzip on;
		add_header X-Frame-Options SAMEORIGIN;
		add_header X-Cache $upstream_cache_status;
		rewrite ^/old/(.*)$ /new/$1 permanent;
		if ($http_x_token = "s3cret-token") { return 403; }
		location / { try_files $uri $uri/ /index.php?$args; }
		location ~* \.(css|js|png)$ { expires 30d; access_log off; }
		location = /xmlrpc.php { deny all; }
		location ~ \.php$ {
			include snippets/fastcgi-php.conf;
			fastcgi_pass unix:/run/php/php8.2-fpm.sock;
			fastcgi_param HTTP_PROXY "";
			fastcgi_param APP_KEY base64:secretvalue;
			fastcgi_cache WORDPRESS;
			fastcgi_cache_valid 200 60m;
			fastcgi_read_timeout 300;
		}
	}
	server {
		listen 80;
		server_name plain.test;
		root /var/www/plain;
		location / { try_files $uri /index.php$is_args$args; }
		location ~ \.php$ { fastcgi_pass 127.0.0.1:9000; fastcgi_cache off; }
	}
}
`

func TestNginxUncarried(t *testing.T) {
	c, err := livehost.ParseNginxDump([]byte(wordOpsLike))
	if err != nil {
		t.Fatal(err)
	}
	vs := NginxVhosts(c, "")
	if len(vs) != 2 {
		t.Fatalf("%d vhosts", len(vs))
	}
	at := "/etc/nginx/nginx.conf:"
	want := []string{
		"fastcgi_cache WORDPRESS at " + at + "23 (location ~ \\.php$): production can answer from its page cache without PHP; the lab has none and sends every request to PHP, so its rates are PHP's uncached ones",
		"rewrite ^/old/(.*)$ /new/$1 permanent at " + at + "13: not carried (the lab sends a path that is no file to /index.php)",
		"if (…) at " + at + "14 (return): not carried (the lab sends a path that is no file to /index.php)",
		"location ~* \\.(css|js|png)$ at " + at + "16 (expires, access_log): not carried (the lab serves that path as a file or through /index.php)",
		"location = /xmlrpc.php at " + at + "17 (deny): not carried (the lab serves that path as a file or through /index.php)",
		"fastcgi_param APP_KEY (" + at + "22): not carried (PHP does not see them in the lab; their values are not read)",
		"add_header at " + at + "11 and 1 more: not carried",
		"fastcgi_read_timeout at " + at + "25: not carried",
		"gzip at " + at + "10: not carried",
	}
	if !reflect.DeepEqual(vs[0].Uncarried, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(vs[0].Uncarried, "\n"), strings.Join(want, "\n"))
	}
	for _, u := range vs[0].Uncarried {
		if strings.Contains(u, "s3cret") || strings.Contains(u, "secretvalue") {
			t.Errorf("a value that may be a secret is printed: %s", u)
		}
	}
	// A front controller without $uri/, with its query string spelled
	// otherwise, and a cache turned off: the lab's own block.
	if got := vs[1].Uncarried; len(got) != 1 || !strings.HasPrefix(got[0], "location / at "+at+"32: try_files $uri /index.php$is_args$args") {
		t.Errorf("plain.test: %q", got)
	}
	// lab up says them as notes, after the server's kind.
	st := LiveStart(&Site{Vhost: vs[0]})
	n := 0
	for _, s := range st.Notes {
		if strings.HasPrefix(s, "nginx vhost: ") {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("%d nginx notes in %q", n, st.Notes)
	}
}

func TestFrontController(t *testing.T) {
	for _, tt := range []struct {
		args string
		want bool
	}{
		{"$uri $uri/ /index.php?$args", true},
		{"$uri $uri/ /index.php?$query_string", true},
		{"$uri $uri/ /index.php", true},
		{"$uri /index.php?$args", true},
		{"$uri /index.php$is_args$args", false},
		{"$uri $uri/ =404", false},
		{"$uri $uri/ @rewrite", false},
		{"/index.php", false},
	} {
		if got := frontController(strings.Fields(tt.args)); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.args, got, tt.want)
		}
	}
}

// FuzzNginxUncarried: whatever the configuration, each line is one
// printable line, and the value of a FastCGI parameter or an if's
// condition (a server with a marker there is added to every input)
// is never shown.
func FuzzNginxUncarried(f *testing.F) {
	f.Add(wordOpsLike)
	f.Add("http { server { location ~ php { fastcgi_pass x; } } }")
	const marker = "Zq9marker"
	secret := "server { if ($a = " + marker + ") { return 403; } location ~ php { fastcgi_pass x; fastcgi_param K " + marker + "; fastcgi_param HTTP_PROXY " + marker + "; } }"
	f.Fuzz(func(t *testing.T, conf string) {
		text := "# configuration file /etc/nginx/nginx.conf:\nhttp { " + secret + " }\n# configuration file /etc/nginx/b.conf:\n" + conf
		c, err := livehost.ParseNginxDump([]byte(text))
		if err != nil {
			return
		}
		for _, v := range NginxVhosts(c, "") {
			if len(v.Uncarried) > maxUncarried+1 {
				t.Fatalf("%d lines", len(v.Uncarried))
			}
			for _, u := range v.Uncarried {
				if strings.ContainsAny(u, "\n\r\x1b") {
					t.Fatalf("not one printable line: %q", u)
				}
				if v.File == "/etc/nginx/nginx.conf" && strings.Contains(u, marker) {
					t.Fatalf("a value is shown: %q", u)
				}
			}
		}
	})
}
