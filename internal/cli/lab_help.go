package cli

import "github.com/phptune/phptune/internal/stack/lab"

// labLong is lab's --help text; it names the labs' directory.
func labLong() string {
	return `A lab is nginx + php-fpm (+ MariaDB) + an app, started from the distro's
packages with configuration rendered into a private directory (` + lab.Root() + `),
on a free loopback port. Nothing under /etc is written and no system service
is touched. Processes run as an unprivileged user.

lab up --site NAME|DIR serves a site of this host (found as phptune site
finds it) sealed: every process of the lab in a private network namespace
with loopback only and a private mount namespace, nginx with the site's names
on 127.0.0.1:80 and on a unix socket in the lab directory (the host's only
way in: curl --unix-socket, or phptune lab forward), the lab's own MariaDB
on 127.0.0.1:3306 and /run/mysqld/mysqld.sock inside, the docroot as an
overlay whose writes stay in the lab. Connections that try to leave are
refused and counted (lab up and lab status show them). Its database is a
copy of production's (--db-from, by default the one the site's
configuration names: mariadb-dump --single-transaction as the app's own
account, read-only) or a dump of yours (--db-dump), with the app's account
and password; lab reset restores that copy. It starts from the live pool
and php.ini (kept in the lab's live.knobs), and WP-cron is off while it
runs for a WordPress site.`
}

// labUpExample is lab up's --help examples.
const labUpExample = `  phptune lab up --site site.test
  phptune lab up --app wordpress
  phptune lab up --name big --app io --set pm=static --set pm.max_children=48
  phptune lab up --docroot ./public --knobs recommended.knobs
  phptune lab up --app wordpress --server apache-prefork-modphp --set apache.max_request_workers=10`
