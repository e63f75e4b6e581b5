package hosttest

import (
	"os"
	"path/filepath"
	"testing"
)

// ApacheSite is one file of a Debian Apache copy's sites-available,
// enabled by a link in sites-enabled as a2ensite makes it.
type ApacheSite struct {
	Name string // "wiki" for sites-available/wiki.conf
	Conf string
}

// ApacheLayout says what DebianApache writes besides Debian's own
// files: the MPM module ("event" or "prefork"), whether mod_php 8.2
// (mods-enabled/php8.2.load and .conf) and the php8.2-fpm conf snippet
// (conf-enabled/php8.2-fpm.conf) are enabled, the sites, and extra
// lines for envvars.
type ApacheLayout struct {
	MPM     string
	ModPHP  bool
	FPMConf bool
	Sites   []ApacheSite
	Envvars string
}

// DebianApache writes a copy of Debian 12's /etc/apache2 under root as
// its apache2 package lays it out (apache2.conf, envvars, ports.conf,
// the *-available directories and the *-enabled links to them), as data
// for the tests that read Apache's configuration; no Apache is started.
// It returns ROOT/etc/apache2.
func DebianApache(t testing.TB, root string, l ApacheLayout) string {
	t.Helper()
	dir := filepath.Join(root, "etc", "apache2")
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	enable := func(kind, file string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, kind+"-enabled"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..", kind+"-available", file), filepath.Join(dir, kind+"-enabled", file)); err != nil {
			t.Fatal(err)
		}
	}
	write("apache2.conf", debianApacheConf)
	write("envvars", debianEnvvars+l.Envvars)
	write("ports.conf", "Listen 80\n\n<IfModule ssl_module>\n\tListen 443\n</IfModule>\n\n<IfModule mod_gnutls.c>\n\tListen 443\n</IfModule>\n")
	mpm := l.MPM
	if mpm == "" {
		mpm = "event"
	}
	for _, m := range []string{"event", "prefork", "worker"} {
		write("mods-available/mpm_"+m+".load", "# Conflicts: mpm_worker mpm_prefork\nLoadModule mpm_"+m+"_module /usr/lib/apache2/modules/mod_mpm_"+m+".so\n")
	}
	enable("mods", "mpm_"+mpm+".load")
	write("mods-available/proxy.load", "LoadModule proxy_module /usr/lib/apache2/modules/mod_proxy.so\n")
	write("mods-available/proxy_fcgi.load", "# Depends: proxy\nLoadModule proxy_fcgi_module /usr/lib/apache2/modules/mod_proxy_fcgi.so\n")
	write("mods-available/ssl.load", "LoadModule ssl_module /usr/lib/apache2/modules/mod_ssl.so\n")
	write("mods-available/php8.2.load", "# Conflicts: php5\n# Depends: mpm_prefork\nLoadModule php_module /usr/lib/apache2/modules/libphp8.2.so\n")
	write("mods-available/php8.2.conf", "<FilesMatch \".+\\.ph(?:ar|p|tml)$\">\n    SetHandler application/x-httpd-php\n</FilesMatch>\n")
	write("conf-available/php8.2-fpm.conf", debianFPMConf)
	write("conf-available/security.conf", "ServerTokens OS\nServerSignature On\nTraceEnable Off\n")
	for _, m := range []string{"proxy.load", "proxy_fcgi.load", "ssl.load"} {
		enable("mods", m)
	}
	enable("conf", "security.conf")
	if l.ModPHP {
		enable("mods", "php8.2.load")
		enable("mods", "php8.2.conf")
	}
	if l.FPMConf {
		enable("conf", "php8.2-fpm.conf")
	}
	for _, s := range l.Sites {
		write("sites-available/"+s.Name+".conf", s.Conf)
		enable("sites", s.Name+".conf")
	}
	return dir
}

// debianApacheConf is the directives of Debian 12's apache2.conf (its
// comments left out).
const debianApacheConf = `DefaultRuntimeDir ${APACHE_RUN_DIR}
PidFile ${APACHE_PID_FILE}
Timeout 300
KeepAlive On
MaxKeepAliveRequests 100
KeepAliveTimeout 5
User ${APACHE_RUN_USER}
Group ${APACHE_RUN_GROUP}
HostnameLookups Off
ErrorLog ${APACHE_LOG_DIR}/error.log
LogLevel warn

# Include module configuration:
IncludeOptional mods-enabled/*.load
IncludeOptional mods-enabled/*.conf

# Include list of ports to listen on
Include ports.conf

<Directory />
	Options FollowSymLinks
	AllowOverride None
	Require all denied
</Directory>

<Directory /usr/share>
	AllowOverride None
	Require all granted
</Directory>

<Directory /var/www/>
	Options Indexes FollowSymLinks
	AllowOverride None
	Require all granted
</Directory>

AccessFileName .htaccess
<FilesMatch "^\.ht">
	Require all denied
</FilesMatch>

LogFormat "%v:%p %h %l %u %t \"%r\" %>s %O \"%{Referer}i\" \"%{User-Agent}i\"" vhost_combined
LogFormat "%h %l %u %t \"%r\" %>s %O \"%{Referer}i\" \"%{User-Agent}i\"" combined

# Include generic snippets of statements
IncludeOptional conf-enabled/*.conf

# Include the virtual host configurations:
IncludeOptional sites-enabled/*.conf
`

// debianEnvvars is Debian 12's /etc/apache2/envvars, its comments and
// the lines that do not set a variable left out.
const debianEnvvars = `unset HOME
if [ "${APACHE_CONFDIR##/etc/apache2-}" != "${APACHE_CONFDIR}" ] ; then
	SUFFIX="-${APACHE_CONFDIR##/etc/apache2-}"
else
	SUFFIX=
fi
export APACHE_RUN_USER=www-data
export APACHE_RUN_GROUP=www-data
export APACHE_PID_FILE=/var/run/apache2$SUFFIX/apache2.pid
export APACHE_RUN_DIR=/var/run/apache2$SUFFIX
export APACHE_LOCK_DIR=/var/lock/apache2$SUFFIX
export APACHE_LOG_DIR=/var/log/apache2$SUFFIX
export LANG=C
export LANG
`

// debianFPMConf is the directives of Debian 12's php8.2-fpm Apache
// snippet (conf-available/php8.2-fpm.conf).
const debianFPMConf = `# Redirect to local php-fpm if mod_php is not available
<IfModule !mod_php8.c>
<IfModule proxy_fcgi_module>
    <IfModule setenvif_module>
    SetEnvIfNoCase ^Authorization$ "(.+)" HTTP_AUTHORIZATION=$1
    </IfModule>
    <FilesMatch ".+\.ph(?:ar|p|tml)$">
        SetHandler "proxy:unix:/run/php/php8.2-fpm.sock|fcgi://localhost"
    </FilesMatch>
    <FilesMatch ".+\.phps$">
        Require all denied
    </FilesMatch>
    <FilesMatch "^\.ph(?:ar|p|ps|tml)$">
        Require all denied
    </FilesMatch>
</IfModule>
</IfModule>
`
