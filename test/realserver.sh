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
[ "$(id -u)" = 0 ] || { echo "test/realserver.sh: run as root (it makes namespaces and starts the distro's servers)" >&2; exit 2; }
if [ "${PHPTUNE_REALSERVER_INNER:-}" != 1 ]; then
	exec unshare --mount --net --propagation private \
		env PHPTUNE_REALSERVER_INNER=1 bash "$0" "$@"
fi
for b in nginx php-fpm8.2 mariadbd mariadb; do
	command -v "$b" >/dev/null || { echo "test/realserver.sh: $b is missing: run make setup first" >&2; exit 2; }
done
ip link set lo up
work=$(mktemp -d /tmp/phptune-realserver.XXXXXX)
stop_servers() {
	local f
	for f in /run/nginx.pid /run/php/php8.2-fpm.pid /run/php/php-panel.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	[ -n "${mariadbd_pid:-}" ] && kill "$mariadbd_pid" 2>/dev/null && wait "$mariadbd_pid" 2>/dev/null || true
}
made_points=()
trap 'stop_servers; cd /; umount -l /var/lib/php-panel /var/lib/mysql-panel /etc/nginx /var/log/nginx /var/lib/mysql /var/www /etc/hosts /run 2>/dev/null || true; for d in "${made_points[@]}"; do rmdir "$d" 2>/dev/null || true; done; rm -rf "$work"' EXIT

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
	location ~ \.php$ {
		include snippets/fastcgi-php.conf;
		fastcgi_pass unix:/run/php/php8.2-fpm.sock;
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
cp /etc/hosts "$work/hosts"
echo "127.0.0.1 site.test www.site.test" >>"$work/hosts"
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
echo "test/realserver.sh: nginx on :80 (default + site.test), php8.2-fpm (and a panel's pool on /var/lib/php-panel/site.sock), MariaDB on /run/mysqld/mysqld.sock (also /var/lib/mysql-panel/mysqld.sock) and 127.0.0.1:3306" >&2

# Tests that need this production server run only here.
export PHPTUNE_REALSERVER=1
# The network namespace reaches nothing: Go must build from its cache.
export GOPROXY=off GOFLAGS="${GOFLAGS:-} -mod=mod"
"$@"

