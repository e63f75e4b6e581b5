package cli

// applyLong is apply's --help text.
const applyLong = `phptune apply puts a recommendation (a tune's directory, or --knobs FILE as
recommended.knobs holds) on a running host without editing its files: the pool's
settings go to a drop-in in the pool's include directory (pool.d/zz-phptune.conf,
reopening the pool's section, read after its own file) and PHP's to conf.d/99-phptune.ini.
nginx's (the running master of ROOT/etc/nginx/nginx.conf or --nginx-config, read
through its own nginx -T) go to zz-phptune.conf in a directory nginx includes at
http level (conf.d), when an http-level file may carry them and no other file
sets them at http level already: keepalive_timeout, access_log off.

As root, apply reads the recommendation (recommended.knobs, result.json or
--knobs FILE) only when no other account could have written it: the file
and its directory must be root's or yours (SUDO_UID's under sudo), writable
by no group or other account, and the file no link; anything else is
refused, naming its owner or mode.

The whole change is one transaction. The previous state of every file it
writes is saved under phptune's home first; then the files are written
atomically (temporary file, fsync, rename), only into directories no other
user can write; php-fpm -t checks the whole configuration; php-fpm reloads
(systemctl only when the master is the main process of the systemd service
its cgroup names, otherwise SIGUSR2 to the master found in /proc by its
title, owned by root: no pid file is trusted), letting the requests in
flight finish for up to its process_control_timeout. Debian's php-fpm.conf
leaves that at 0, with which a reload kills them (502s): the first apply on
such a master sets process_control_timeout = 10s in zz-phptune-reload.conf
beside the pool's drop-in, in a transaction of its own reloaded at a moment
the pool is idle (that one reload is abrupt if none comes within 10 s);
phptune rollback of the recommendation leaves it, a second rollback removes
it. Requests go to the pool during every php-fpm reload and the failures are
counted and printed; with --settle above 0 any failure rolls back. nginx
likewise (nginx -t -c CONF, then systemctl reload nginx or SIGHUP to its master
found the same way, done once new workers run and the old ones stopped
accepting); the health check waits for the reloaded master
and reads the pool's status page (pm.status_path; without it, it only
connects), and --check-url must answer as it did before. Any failure rolls
every file back and reloads the old configuration; so does Ctrl-C. An apply
killed outright is undone by the next phptune apply or phptune rollback.
One apply or rollback runs at a time (a lock). phptune rollback undoes the
last apply by hand.

MariaDB's knobs (mariadb.*) go to 99-phptune.cnf in the last directory its
my.cnf includes (!includedir; Debian: /etc/mysql/mariadb.conf.d), in the same
transaction: mariadbd --help --verbose checks the whole configuration and that
the server would start with the new values; the dynamic variables are set live
with SET GLOBAL (their previous values read first and recorded in the file, so
a rollback sets them back; a value the server truncates or refuses fails the
apply); a query must answer and the values read back. MariaDB is found in /proc
(--mariadb-socket names its socket) and is talked to only after SO_PEERCRED
shows the socket is its process's. It is never restarted: a variable that is
not dynamic takes effect at its next restart, unless --restart-db is given
and systemd runs it as its service's main process (systemctl restart).

--settle (5s) is also an error-rate check: the 5xx lines in the access logs of
the nginx servers whose fastcgi_pass sends to the pool (never another server's;
a pool no running nginx passes to is said so) over the settle window after the
reload against as long before the apply (or, without such a log, the pool's
status page: max children reached and slow requests
per accepted connection, measured over as long before the change); a rate worse
after (at least 3 errors, over 1 point and twice the rate before) rolls back,
the numbers in the reason.

Settings a drop-in cannot carry are refused or printed, never written: a change
of the pool's socket (listen), several pools (fpm.pools), nginx's
worker_processes, worker_rlimit_nofile, worker_cpu_affinity, events
(worker_connections, multi_accept), listen (backlog, reuseport) and a directive
your files already set at http level: these are printed as an exact patch of
your files, kept beside the transaction for cd ROOT && patch -p0.

--dry-run prints each file's diff and the plan, and changes nothing. Without
--yes apply asks before changing anything (and refuses when it cannot ask).`

// rollbackLong is rollback's --help text.
const rollbackLong = `phptune rollback undoes the newest apply that is not undone yet: every file it
wrote goes back to its saved previous state (a file it created is removed),
the servers the apply changed (php-fpm, nginx) check and reload the restored
configuration and their health is checked; MariaDB's variables are set back to
the values the apply recorded. An apply that was cut short (killed) is undone
the same way, here or by the next phptune apply. Give the same host flags as
the apply. Without --yes rollback names the transaction and asks first (and
refuses when it cannot ask).

php-fpm's reload lets the requests in flight finish when its master has a
process_control_timeout (the first apply sets one, in a transaction of its own
that the recommendation's rollback leaves: a second rollback undoes it, and
its reload is then the last graceful one); requests are sent to the pool
during the reload and the failures counted and printed.`
