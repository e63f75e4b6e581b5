#!/usr/bin/env bash
# Runs a command on a simulated production server, the machine the tests
# must also pass on: inside private PID, mount and network namespaces, the
# distro's nginx listens on :80 with a vhost of its own (site.test, a
# WordPress-like docroot in /var/www/site) beside the default site,
# php8.2-fpm runs its Debian pool on /run/php/php8.2-fpm.sock, and MariaDB
# answers on /run/mysqld/mysqld.sock and 127.0.0.1:3306 with a database of
# its own — as on a real server. The host sees none of it: /etc/nginx,
# /var/lib/mysql, /var/www, /run and /etc/hosts are private copies, the
# network namespace has loopback only, and the servers are stopped when the
# command ends. The processes share the host's PID namespace, as a real
# server's do: the tests' observers see the whole machine.
#
# Debian's Apache runs there too, as Debian lays it out (a private copy of
# /etc/apache2, a private /var/log/apache2): the event MPM with proxy_fcgi,
# setenvif and rewrite enabled, Listen 8080 (nginx has :80; no 443), and a
# vhost sites-enabled/wiki.test.conf serving wiki.test (alias
# www.wiki.test) from /var/www/wiki, a MediaWiki-like docroot whose
# LocalSettings.php names the database wiki (user wiki at localhost), with
# .php handed to php8.2-fpm's pool by SetHandler "proxy:unix:..." and a
# .htaccess rewrite of /wiki/TITLE. 000-default is disabled: Apache does
# not listen on :80 here, and a *:80 vhost would read as Apache serving
# port 80 beside nginx. apache2 is started with envvars sourced, never
# through apache2ctl or a service (apache2ctl hands start to systemctl on
# a systemd host); the host's own apache2 service is never touched.
#
# PHPTUNE_REALSERVER_APACHE=modphp runs that Apache as a mod_php server
# instead (Debian's Apache runs one MPM at a time): the prefork MPM with
# Debian's php8.2 module (libapache2-mod-php8.2, its php.ini
# /etc/php/8.2/apache2/php.ini), setenvif and rewrite, serving the same
# wiki.test vhost with PHP run in Apache's children (no SetHandler to
# php-fpm) and two PHP settings of its own, php_admin_value memory_limit
# 192M and php_value upload_max_filesize 32M. Everything else is as
# above; the tests read the mode from PHPTUNE_REALSERVER_APACHE (event or
# modphp), exported to the command.
#
# What a hosting panel adds is there too: a second php-fpm master whose
# pool "panel" runs as www-data (chdir /var/lib/php-panel/www) and listens
# outside /run, at /var/lib/php-panel/site.sock, and production's MariaDB
# socket directory also at /var/lib/mysql-panel (a bind of /run/mysqld),
# where a panel's DB_HOST names it ('localhost:/var/lib/mysql-panel/mysqld.sock').
# Both are private mounts; their empty mount points in the host's /var/lib
# are made when missing and removed at the end.
#
#   bash test/realserver.sh go test -count=1 -p 1 ./internal/live/livehost/...
set -euo pipefail
apache_mode=${PHPTUNE_REALSERVER_APACHE:-event}
case $apache_mode in
event | modphp) ;;
*) echo "test/realserver.sh: PHPTUNE_REALSERVER_APACHE=$apache_mode: want event (the default) or modphp" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "test/realserver.sh: run as root (it makes namespaces and starts the distro's servers)" >&2; exit 2; }
if [ "${PHPTUNE_REALSERVER_INNER:-}" != 1 ]; then
	exec unshare --mount --net --propagation private \
		env PHPTUNE_REALSERVER_INNER=1 bash "$0" "$@"
fi
for b in nginx php-fpm8.2 mariadbd mariadb apache2; do
	command -v "$b" >/dev/null || { echo "test/realserver.sh: $b is missing: run make setup first" >&2; exit 2; }
done
[ -f /etc/apache2/apache2.conf ] && [ -f /etc/apache2/envvars ] || { echo "test/realserver.sh: Debian's apache2 package (its /etc/apache2) is missing: run make setup first" >&2; exit 2; }
if [ "$apache_mode" = modphp ]; then
	[ -f /etc/apache2/mods-available/php8.2.load ] && [ -f /usr/lib/apache2/modules/libphp8.2.so ] || { echo "test/realserver.sh: Debian's mod_php (libapache2-mod-php8.2) is missing: run make setup first" >&2; exit 2; }
fi
ip link set lo up
work=$(mktemp -d /tmp/phptune-realserver.XXXXXX)
stop_servers() {
	local f
	for f in /run/nginx.pid /run/apache2/apache2.pid /run/php/php8.2-fpm.pid /run/php/php-panel.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	[ -n "${mariadbd_pid:-}" ] && kill "$mariadbd_pid" 2>/dev/null && wait "$mariadbd_pid" 2>/dev/null || true
}
made_points=()
trap 'stop_servers; cd /; umount -l /var/lib/php-panel /var/lib/mysql-panel /etc/nginx /var/log/nginx /etc/apache2 /var/log/apache2 /var/lib/mysql /var/www /etc/hosts /run 2>/dev/null || true; for d in "${made_points[@]}"; do rmdir "$d" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# /run: a private tmpfs with what the servers expect.
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/mysqld /run/php /run/lock
chown mysql:mysql /run/mysqld

# The production site: a vhost of the machine's own, on :80.
cp -a /etc/nginx "$work/nginx"
cat >"$work/nginx/sites-available/site.test" <<'CONF'
server {
	listen 80;
	listen [::]:80;
	server_name site.test www.site.test;
	root /var/www/site;
	index index.php index.html;
	access_log /var/log/nginx/site.access.log;
	location / {
		try_files $uri $uri/ /index.php?$args;
	}
	location ~ /\.ht {
		deny all;
	}
	location ~ \.php$ {
		include snippets/fastcgi-php.conf;
		fastcgi_pass unix:/run/php/php8.2-fpm.sock;
		fastcgi_param APP_ENV prod-Zq9;
	}
}
CONF
ln -s ../sites-available/site.test "$work/nginx/sites-enabled/site.test"
mount --bind "$work/nginx" /etc/nginx
mkdir -p "$work/log-nginx"
mount --bind "$work/log-nginx" /var/log/nginx
mkdir -p "$work/www"
cp -a /var/www/. "$work/www/" 2>/dev/null || true
mkdir -p "$work/www/site"
cat >"$work/www/site/wp-config.php" <<'PHP'
<?php
define('DB_NAME', 'site');
define('DB_USER', 'site');
define('DB_PASSWORD', 'site-secret');
define('DB_HOST', 'localhost');
$table_prefix = 'wp_';
PHP
# site_page NAME: the site's page NAME, which connects to the site's
# database as WordPress's wpdb does, then runs the PHP read from stdin.
site_page() {
	{
		cat <<'PHP'
<?php
require __DIR__ . '/wp-config.php';
// DB_HOST as wpdb reads it: "host" or "host:/socket".
list($host, $socket) = array_pad(explode(':', DB_HOST, 2), 2, null);
$db = new mysqli($host, DB_USER, DB_PASSWORD, DB_NAME, 0, $socket);
PHP
		cat
	} >"$work/www/site/$1"
}
site_page index.php <<'PHP'
$n = $db->query('SELECT COUNT(*) FROM posts')->fetch_row()[0];
$c = $db->query('SELECT COUNT(*) FROM comments')->fetch_row()[0];
echo "<html><head><title>Production site</title></head><body>$n posts, $c comments</body></html>\n";
PHP
site_page comment.php <<'PHP'
$db->query("INSERT INTO comments (body) VALUES ('a comment')");
@file_put_contents(__DIR__ . '/uploads-' . getmypid() . '.txt', "written\n");
echo "<html><head><title>Comment posted</title></head><body>ok</body></html>\n";
PHP
chown -R www-data:www-data "$work/www/site"
mount --bind "$work/www" /var/www
# The production wiki: Debian's Apache on :8080 (see the top), its
# configuration a private copy of /etc/apache2 changed as an admin would.
cp -a /etc/apache2 "$work/apache2"
a2=$work/apache2
# a2enmod's work done by hand: a2enmod records its state in the host's
# /var/lib/apache2. The event MPM with proxy_fcgi (or prefork with
# mod_php), whatever the host's copy has enabled.
rm -f "$a2"/mods-enabled/mpm_*.load "$a2"/mods-enabled/mpm_*.conf "$a2"/mods-enabled/php*.load "$a2"/mods-enabled/php*.conf \
	"$a2"/mods-enabled/proxy.load "$a2"/mods-enabled/proxy.conf "$a2"/mods-enabled/proxy_fcgi.load
mods="mpm_event.load mpm_event.conf proxy.load proxy.conf proxy_fcgi.load"
# The vhost's PHP: handed to php8.2-fpm's pool, or run by mod_php with
# settings of the vhost's own.
php_lines='	<FilesMatch \.php$>
		SetHandler "proxy:unix:/run/php/php8.2-fpm.sock|fcgi://localhost"
	</FilesMatch>'
if [ "$apache_mode" = modphp ]; then
	mods="mpm_prefork.load mpm_prefork.conf php8.2.load php8.2.conf"
	php_lines='	php_admin_value memory_limit 192M
	php_value upload_max_filesize 32M'
fi
for m in $mods setenvif.load setenvif.conf rewrite.load; do
	ln -sfn "../mods-available/$m" "$a2/mods-enabled/$m"
done
cat >"$a2/ports.conf" <<'CONF'
# nginx has port 80 on this server: Apache listens on 8080 only.
Listen 8080
CONF
rm -f "$a2/sites-enabled/000-default.conf"
cat >"$a2/sites-available/wiki.test.conf" <<CONF
<VirtualHost *:8080>
	ServerName wiki.test
	ServerAlias www.wiki.test
	DocumentRoot /var/www/wiki
	<Directory /var/www/wiki>
		AllowOverride All
		Require all granted
	</Directory>
$php_lines
	CustomLog \${APACHE_LOG_DIR}/wiki.access.log combined
</VirtualHost>
CONF
ln -s ../sites-available/wiki.test.conf "$a2/sites-enabled/wiki.test.conf"
mount --bind "$a2" /etc/apache2
mkdir -p "$work/log-apache2"
chmod 0750 "$work/log-apache2"
chown root:adm "$work/log-apache2"
mount --bind "$work/log-apache2" /var/log/apache2
# The wiki's docroot: MediaWiki's LocalSettings.php as its installer
# writes it, and a front page that connects as MediaWiki does ('localhost':
# the default socket).
mkdir -p "$work/www/wiki"
cat >"$work/www/wiki/LocalSettings.php" <<'PHP'
<?php
# This file was automatically generated by the MediaWiki 1.39.3
# installer. If you make manual changes, please keep track in case you
# need to recreate them later.
#
# See docs/Configuration.md for all configurable settings
# and their default values, but don't forget to make changes in _this_
# file, not there.
#
# Further documentation for configuration settings may be found at:
# https://www.mediawiki.org/wiki/Manual:Configuration_settings

# Protect against web entry
if ( !defined( 'MEDIAWIKI' ) ) {
	exit;
}

## Uncomment this to disable output compression
# $wgDisableOutputCompression = true;

$wgSitename = "Production wiki";
$wgMetaNamespace = "Production_wiki";

## The URL base path to the directory containing the wiki;
## defaults for all runtime URL paths are based off of this.
$wgScriptPath = "";
$wgArticlePath = "/wiki/$1";

## The protocol and server name to use in fully-qualified URLs
$wgServer = "http://wiki.test:8080";

## The URL path to static resources (images, scripts, etc.)
$wgResourceBasePath = $wgScriptPath;

$wgEnableEmail = false;
$wgEnableUserEmail = true; # UPO

$wgEmergencyContact = "";
$wgPasswordSender = "";

## Database settings
$wgDBtype = "mysql";
$wgDBserver = "localhost";
$wgDBname = "wiki";
$wgDBuser = "wiki";
$wgDBpassword = "wiki-secret";

# MySQL specific settings
$wgDBprefix = "";
$wgDBssl = false;

# MySQL table options to use during installation or update
$wgDBTableOptions = "ENGINE=InnoDB, DEFAULT CHARSET=binary";

# Shared database table
# This has no effect unless $wgSharedDB is also set.
$wgSharedTables[] = "actor";

## Shared memory settings
$wgMainCacheType = CACHE_NONE;
$wgMemCachedServers = [];

## To enable image uploads, make sure the 'images' directory
## is writable, then set this to true:
$wgEnableUploads = false;

$wgLanguageCode = "en";

# Time zone
$wgLocaltimezone = "UTC";

$wgSecretKey = "3c1f0a9d6b2e4f8a7c5d9e1b0a2f4c6e8d0b2a4c6e8f0a1b3c5d7e9f1a3b5c7d";

# Changing this will log out all existing sessions.
$wgAuthenticationTokenVersion = "1";

# Site upgrade key. Must be set to a string (default provided) to turn on the
# web installer while LocalSettings.php is in place
$wgUpgradeKey = "9f8e7d6c5b4a3921";

## Default skin: you can change the default skin. Use the internal symbolic
## names, e.g. 'vector' or 'monobook':
$wgDefaultSkin = "vector";
PHP
mkdir -p "$work/www/wiki/includes"
cat >"$work/www/wiki/includes/Defines.php" <<'PHP'
<?php
// MediaWiki's cache type constants, which LocalSettings.php uses.
define( 'CACHE_ANYTHING', -1 );
define( 'CACHE_NONE', 0 );
define( 'CACHE_DB', 1 );
define( 'CACHE_MEMCACHED', 2 );
define( 'CACHE_ACCEL', 3 );
define( 'CACHE_HASH', 'hash' );
PHP
# index.php loads as MediaWiki's WebStart.php does: the constants, then
# LocalSettings.php.
cat >"$work/www/wiki/index.php" <<'PHP'
<?php
define( 'MEDIAWIKI', true );
require __DIR__ . '/includes/Defines.php';
require __DIR__ . '/LocalSettings.php';
$db = new mysqli( $wgDBserver, $wgDBuser, $wgDBpassword, $wgDBname );
$n = $db->query( 'SELECT COUNT(*) FROM page' )->fetch_row()[0];
$title = htmlspecialchars( $_GET['title'] ?? 'Main_Page' );
echo "<html><head><title>Production wiki</title></head><body>$title: $n pages</body></html>\n";
PHP
cat >"$work/www/wiki/.htaccess" <<'CONF'
RewriteEngine On
RewriteRule ^wiki/(.*)$ index.php?title=$1 [L,QSA]
CONF
chown -R www-data:www-data "$work/www/wiki"
# wiki_page PATH: the wiki's page at PATH on :8080, asked with /dev/tcp.
wiki_page() {
	exec 4<>/dev/tcp/127.0.0.1/8080 || return 1
	printf 'GET %s HTTP/1.0\r\nHost: wiki.test\r\n\r\n' "$1" >&4
	cat <&4
	exec 4<&-
}
# start_apache starts apache2 as Debian's service would, with envvars
# sourced (in a subshell: its variables stay there), and waits for the
# wiki's front page and its rewritten /wiki/Main_Page.
start_apache() {
	(
		set +u # envvars reads APACHE_CONFDIR, unset here as under systemd
		. /etc/apache2/envvars
		mkdir -p "$APACHE_RUN_DIR" "$APACHE_LOCK_DIR"
		chown "$APACHE_RUN_USER" "$APACHE_LOCK_DIR"
		apache2 -k start
	) || { cat /var/log/apache2/error.log >&2 2>/dev/null; echo "test/realserver.sh: apache2 did not start" >&2; exit 1; }
	for _ in $(seq 1 50); do
		wiki_page / 2>/dev/null | grep -q 'Main_Page: 3 pages' && break
		sleep 0.1
	done
	wiki_page / 2>/dev/null | grep -q '<title>Production wiki</title>' &&
		wiki_page /wiki/Help 2>/dev/null | grep -q 'Help: 3 pages' ||
		{ cat /var/log/apache2/error.log >&2 2>/dev/null; echo "test/realserver.sh: the production wiki does not answer on :8080" >&2; exit 1; }
}

cp /etc/hosts "$work/hosts"
echo "127.0.0.1 site.test www.site.test wiki.test www.wiki.test" >>"$work/hosts"
mount --bind "$work/hosts" /etc/hosts

# MariaDB with Debian's configuration and a private copy of its datadir.
mkdir -p "$work/mysql"
if [ -d /var/lib/mysql/mysql ]; then
	cp -a /var/lib/mysql/. "$work/mysql/"
else
	mariadb-install-db --user=mysql --datadir="$work/mysql" >/dev/null
fi
chown -R mysql:mysql "$work/mysql"
mount --bind "$work/mysql" /var/lib/mysql
mariadbd --user=mysql >"$work/mariadbd.log" 2>&1 &
mariadbd_pid=$!
for _ in $(seq 1 100); do
	mariadb -e 'SELECT 1' >/dev/null 2>&1 && break
	sleep 0.1
done
mariadb -e 'SELECT 1' >/dev/null || { cat "$work/mariadbd.log" >&2; exit 1; }
mariadb <<'SQL'
CREATE DATABASE IF NOT EXISTS site;
CREATE TABLE IF NOT EXISTS site.posts (id INT PRIMARY KEY AUTO_INCREMENT, title TEXT);
CREATE TABLE IF NOT EXISTS site.comments (id INT PRIMARY KEY AUTO_INCREMENT, body TEXT);
INSERT INTO site.posts (title) VALUES ('hello'), ('world');
CREATE USER IF NOT EXISTS 'site'@'localhost' IDENTIFIED BY 'site-secret';
GRANT ALL ON site.* TO 'site'@'localhost';
CREATE DATABASE IF NOT EXISTS wiki;
CREATE TABLE IF NOT EXISTS wiki.page (page_id INT UNSIGNED PRIMARY KEY AUTO_INCREMENT, page_namespace INT NOT NULL DEFAULT 0,
	page_title VARBINARY(255) NOT NULL, UNIQUE KEY name_title (page_namespace, page_title));
INSERT IGNORE INTO wiki.page (page_title) VALUES ('Main_Page'), ('Help'), ('Sandbox');
CREATE USER IF NOT EXISTS 'wiki'@'localhost' IDENTIFIED BY 'wiki-secret';
GRANT ALL ON wiki.* TO 'wiki'@'localhost';
SQL

php-fpm8.2 --fpm-config /etc/php/8.2/fpm/php-fpm.conf

# The hosting panel's pieces outside /run (see the top).
for d in /var/lib/php-panel /var/lib/mysql-panel; do
	if [ ! -e "$d" ]; then
		mkdir -m 0755 "$d"
		made_points+=("$d")
	fi
done
mkdir -p "$work/php-panel/www"
chmod 0755 "$work/php-panel"
chown www-data:www-data "$work/php-panel/www"
mount --bind "$work/php-panel" /var/lib/php-panel
mount --bind /run/mysqld /var/lib/mysql-panel
cat >"$work/php-panel.conf" <<CONF
[global]
pid = /run/php/php-panel.pid
error_log = $work/php-panel.log
[panel]
user = www-data
group = www-data
listen = /var/lib/php-panel/site.sock
listen.owner = www-data
listen.group = www-data
listen.mode = 0660
pm = static
pm.max_children = 2
chdir = /var/lib/php-panel/www
CONF
php-fpm8.2 --fpm-config "$work/php-panel.conf"
for _ in $(seq 1 50); do
	[ -S /var/lib/php-panel/site.sock ] && break
	sleep 0.1
done
[ -S /var/lib/php-panel/site.sock ] || { cat "$work/php-panel.log" >&2; echo "test/realserver.sh: the panel's php-fpm pool did not start" >&2; exit 1; }
nginx
# The site's front page, asked with bash's own /dev/tcp (no curl needed).
front_page() {
	exec 3<>/dev/tcp/127.0.0.1/80 || return 1
	printf 'GET / HTTP/1.0\r\nHost: site.test\r\n\r\n' >&3
	cat <&3
	exec 3<&-
}
for _ in $(seq 1 50); do
	front_page 2>/dev/null | grep -q '2 posts, 0 comments' && break
	sleep 0.1
done
front_page 2>/dev/null | grep -q '2 posts, 0 comments' || { echo "test/realserver.sh: the production site does not answer" >&2; exit 1; }
start_apache
echo "test/realserver.sh: nginx on :80 (default + site.test), Apache on :8080 (wiki.test, $apache_mode), php8.2-fpm (and a panel's pool on /var/lib/php-panel/site.sock), MariaDB on /run/mysqld/mysqld.sock (also /var/lib/mysql-panel/mysqld.sock) and 127.0.0.1:3306" >&2

# Tests that need this production server run only here; those of its
# Apache read which one it is.
export PHPTUNE_REALSERVER=1 PHPTUNE_REALSERVER_APACHE=$apache_mode
# The network namespace reaches nothing: Go must build from its cache.
export GOPROXY=off GOFLAGS="${GOFLAGS:-} -mod=mod"
"$@"

