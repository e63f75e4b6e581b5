package cli

// tune's --help texts.

// tuneLong is phptune tune's long help.
const tuneLong = `phptune tune loads a lab with a workload, changes one thing at a time and
measures again, as the field reports did by hand: it finds the concurrency
knee, sizes the php-fpm pool to the CPU (or beyond it for pages that wait),
stops at the memory budget computed from the workers' measured PSS, decides
categorical knobs (pm mode, socket, opcache, JIT...) by interleaved paired
comparisons, and validates the result against the starting configuration in
fresh processes (the holdout).

The stack is a lab of its own for --app or --docroot (taken down at the end),
or a lab you run (--lab; its configuration is restored at the end).
--site NAME|DIR tunes a site of this host: a sealed lab of its own (as lab up
--site makes it) that starts from the site's live pool and php.ini, so the
start ("live") is production's configuration and Debian's default is measured
beside it (the distro baseline); requests carry the site's own Host. A running
site lab (--lab) starts from the live configuration it recorded too. What the
lab's code tried to reach outside the lab (refused by the seal) is counted
and shown.
Every trial is stored in the results database as it finishes; Ctrl-C stops
cleanly and --resume RUN continues without redoing finished trials.

Files go to -o DIR (default ./phptune-tune-RUN), made before the lab starts:
a new directory, or an empty one of yours only you can write (another
account's, a link or one holding files is refused). They are the
recommendation in each component's own syntax (php-fpm-pool.conf, php.ini,
nginx.conf, my.cnf), a knob file for 'phptune lab up --knobs', the diff, the
evidence and the report.
sysctl-phptune.conf holds the kernel settings the recommendation needs (for
/etc/sysctl.d/60-phptune.conf) or says none is needed: listen(2) silently
caps every backlog at net.core.somaxconn, and the summary says when a
recommended backlog was capped during the trials. The kernel's settings are
only read, unless --apply-sysctl (root) raises them for the run.

--server tunes a lab behind another web server than nginx: apache-event-fpm,
lighttpd-fpm, caddy-fpm or h2o-fpm (the php-fpm pool is sized),
apache-prefork-modphp (Apache's children run PHP: MaxRequestWorkers is sized)
or unit (NGINX Unit's application processes run PHP: unit.processes is sized;
build Unit first with phptune build unit). The web server's file is then
apache-phptune.conf (a drop-in for /etc/apache2/conf-available/),
lighttpd-phptune.conf (for /etc/lighttpd/conf-available/), a Caddyfile,
h2o.conf's keys, or unit-phptune.json for Unit's control API (see
docs/servers.md).

--objective capacity judges the recommendation by the highest request rate it
sustains within --slo in the open model (phptune capacity's search and SLO
grammar, default p99<500ms; --max-errors is the error limit unless the SLO has
an errors term). The search itself still ranks candidates on closed-model
throughput at -c; after the holdout the start and the recommendation each get
a capacity search, and the result gives both capacities and their ratio. Up to
40% of --time-budget (2 searches × 10 steps at the start's rate) is kept for
those searches; the closed-model curve is left out (docs/capacity.md).

Trials run on phptune's own generator: --engine locust is refused (Locust's
start-up and throwaway warm-up in every trial would break the time budget's
plan); measure the recommendation on Locust with phptune compare --engine
locust (docs/locust.md).`

// tuneExample is phptune tune's examples.
const tuneExample = `  phptune tune --app hello --time-budget 5m
  phptune tune --app wordpress --workload front --memory-budget 1G
  phptune tune --app wordpress --server apache-prefork-modphp -c 10
  phptune tune --app wordpress --workload comment --max-errors 0.1% --slo 'p99<2s'
  phptune tune --lab mylab --workload /shop/ --objective latency
  phptune tune --app io --objective capacity --slo 'p99<1s'
  phptune tune --resume 20261123-071502`
