package cli

// adviseLong is advise's --help text.
const adviseLong = `phptune advise reads what a running host shows, sending no load and changing
nothing: every php-fpm master in /proc (or the one of --fpm-config), its pools
as configured (include globs followed), each pool's workers' memory (PSS), its
status page over FastCGI when pm.status_path is set (max active processes, max
children reached, listen queue since the master started), the host's memory,
swap and the masters' cgroup limit.

Every pool is sized together under the host's one memory budget (available
memory plus what the workers hold, less a reserve of a tenth of the host, at
least 256 MiB): each pool's share follows its peak (max active processes, or
its configured size without a status page) times its workers' 95th percentile
PSS. A pool larger than its share is lowered; a pool that reached
pm.max_children is raised, at most doubled, when its share allows; the others
are kept. Findings say what was read and what was not (the status page off,
and how to turn it on; a master up for less than a day: too short to trust
its peaks; queueing; swap). Advise cannot see the knee without load: phptune
tune measures it. --watch 10m samples every --every (10 s) over that long: the
workers' PSS percentiles then cover the whole watch and the memory available is the
lowest seen.

MariaDB, when one runs (mariadbd in /proc owned by root or mysql; its socket
from its command line, its option files or --mariadb-socket), is read as root
by unix_socket authentication, after SO_PEERCRED shows the socket's listener is
that server: its counters since it started (uptime under a day: too short to
trust), max used connections against max_connections and the pools' total
pm.max_children, the buffer pool against its InnoDB data (InnoDB's persistent
index statistics) and its hit rate, temporary tables on disk, slow queries, the
query cache. It makes no temporary table on disk: the counters first, the
variables as @@GLOBAL.name, no information_schema query. It shares the one
memory budget with the pools: a raised buffer pool comes out of it.

It finds the web server in front: the running nginx master (its -c, or
--nginx-config; ROOT/etc/nginx/nginx.conf under --root) read through its own
nginx -T, and Apache's SetHandler/ProxyPassMatch hand-offs (apache2.conf and
its includes, apache2ctl -S); for each pool it says which server and listen
address pass to its socket, and warns of a pool no server passes to, of an
nginx whose workers x worker_connections hold fewer proxied requests than the
pools' max_children, of upstream keepalive holding more workers than a pool
has or kept without fastcgi_keep_conn on, and of listen backlogs
net.core.somaxconn caps.

--exit-code exits 1 when a change is recommended (as git diff --exit-code), so
advise fits monitoring and CI; 2 stays a bad command line. The drop-in it
prints is what phptune apply writes.

--opcache reads each master's opcache (shared by its pools) through one of its
pools: a status script written into a new private directory under
--opcache-dir (root's, 0755; the script 0644: the pool reads it, nobody else
can write it), requested over FastCGI only after SO_PEERCRED shows the socket
is held by the master, and removed afterwards, Ctrl-C included. A pool whose
chroot, security.limit_extensions, open_basedir or disable_functions would
block it is not used, and the reason is printed. Findings: opcache off; its
memory, interned strings, key table, JIT buffer or realpath cache full (raised
to twice what they hold, max_accelerated_files to the prime PHP uses); the hit
rate; timestamps checked on every request; the JIT off.

When the results database holds a finished tune of the host's PHP version
(the newest, or --tune RUN-ID), advise puts its measured pool size beside its
own and says why they differ. --html FILE writes an offline page (a link or
another account's file under that name is refused); -o DIR writes
advice.json, advice.html and advice.txt into a new directory (or an empty one
of yours only you can write).`
