package livehost

import (
	"reflect"
	"testing"
)

// TestApacheCarry: the directives a lab carries are kept as written, in
// the vhost or in a <Directory> block at its top level; others, and
// those in nested sections, are counted as dropped.
func TestApacheCarry(t *testing.T) {
	conf := `LoadModule rewrite_module /usr/lib/apache2/modules/mod_rewrite.so
LoadModule headers_module /usr/lib/apache2/modules/mod_headers.so
<IfModule mpm_event_module>
	MaxRequestWorkers 300
	ThreadsPerChild 50
</IfModule>
MaxClients 200
KeepAlive Off
<Directory /var/www/>
	Options Indexes FollowSymLinks
	AllowOverride None
	Require all granted
</Directory>
<VirtualHost *:8080>
	ServerName wiki.test
	DocumentRoot /var/www/wiki
	<Directory /var/www/wiki>
		AllowOverride All
		Require ip 10.0.0.0/8
		<FilesMatch "\.php$">
			SetHandler "proxy:unix:/run/php/php8.2-fpm.sock|fcgi://localhost"
		</FilesMatch>
		RewriteRule ^x$ y.php [L]
	</Directory>
	<IfModule mod_rewrite.c>
	RewriteEngine On
	RewriteCond %{REQUEST_FILENAME} !-f
	RewriteRule ^wiki/(.*)$ /index.php?title=$1 [L,QSA]
	</IfModule>
	<Location /private>
		RewriteRule ^ - [F]
	</Location>
	DirectoryIndex index.php
	KeepAlive On
	CustomLog ${APACHE_LOG_DIR}/wiki.log combined
	RewriteRule ^logs$ ${APACHE_LOG_DIR} [L]
</VirtualHost>
`
	c := ParseApacheConfig("/etc/apache2/apache2.conf", []byte(conf), map[string]string{"APACHE_LOG_DIR": "/var/log/apache2"})
	if want := []string{"rewrite", "headers"}; !reflect.DeepEqual(c.Modules, want) {
		t.Errorf("modules %v, want %v", c.Modules, want)
	}
	if len(c.Directories) != 1 || c.Directories[0].Path != "/var/www/" || len(c.Directories[0].Lines) != 3 {
		t.Fatalf("server directories %+v", c.Directories)
	}
	if len(c.Vhosts) != 1 {
		t.Fatalf("vhosts %+v", c.Vhosts)
	}
	// Server-wide sizing, the last value read (MaxClients is
	// MaxRequestWorkers' old name); a vhost's own is not server-wide.
	want := map[string]string{"MaxRequestWorkers": "200", "ThreadsPerChild": "50", "KeepAlive": "Off"}
	for k, v := range want {
		if c.Settings[k].Text != v {
			t.Errorf("setting %s = %+v, want %s", k, c.Settings[k], v)
		}
	}
	if len(c.Settings) != len(want) {
		t.Errorf("settings %+v", c.Settings)
	}
	v := c.Vhosts[0]
	var lines []string
	for _, l := range v.Carried {
		lines = append(lines, l.Text)
	}
	// The rule naming ${APACHE_LOG_DIR} is expanded when read, so it is
	// kept as production's Apache reads it.
	wantLines := []string{"RewriteEngine On", "RewriteCond %{REQUEST_FILENAME} !-f", "RewriteRule ^wiki/(.*)$ /index.php?title=$1 [L,QSA]",
		"DirectoryIndex index.php", "RewriteRule ^logs$ /var/log/apache2 [L]"}
	if !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("carried %q\nwant    %q", lines, wantLines)
	}
	if len(v.Directories) != 1 {
		t.Fatalf("vhost directories %+v", v.Directories)
	}
	d := v.Directories[0]
	var dl []string
	for _, l := range d.Lines {
		dl = append(dl, l.Text)
	}
	if want := []string{"AllowOverride All", "RewriteRule ^x$ y.php [L]"}; d.Path != "/var/www/wiki" || !reflect.DeepEqual(dl, want) || d.Dropped != 2 {
		t.Errorf("directory %+v (lines %q), want %q and 2 dropped (Require ip, SetHandler in FilesMatch)", d, dl, want)
	}
	// The PHP hand-off inside the block is still read.
	if len(v.Proxies) != 1 {
		t.Errorf("proxies %+v", v.Proxies)
	}
}
