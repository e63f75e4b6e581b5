package cli

// compareLong is phptune compare's --help text.
const compareLong = `phptune compare brings up one lab and measures each configuration in turn,
round after round (A B C, B C A, ...), each in fresh processes, so that a noisy
machine disturbs them alike. It prints each one's median throughput and p99
and its throughput ratio against the first with a 95% confidence interval,
PHP's CPU per request (its workers and php-fpm's master), and the PHP speed
ratio: the first's PHP CPU per request ÷ each one's, every run's divided by
phptune's machine-speed probe reading during it (a fixed unit of work timed
every 100 ms), which a neighbour slowing the CPU moves less than throughput
or raw CPU per request.

The lab is one of its own for --app (default hello) or --docroot (your app,
a directory with index.php), taken down at the end, or a lab you run
(--lab NAME), whose configuration is restored at the end. --user runs a lab
of its own as that account (root only, never root): the app then runs with
that account's rights. --site NAME|DIR compares on a sealed lab of its own of
a site of this host (as lab up --site makes it), with the site's own Host;
the CONFIG live is then the site's live configuration (its pool and php.ini
as production runs them), also on a running site lab (--lab).

A CONFIG is a knob file (as phptune tune writes: recommended.knobs) or
"default" for the distro's configuration, or "live" for a site's (--site);
LABEL=FILE names it. LABEL=KNOB=VALUE[;KNOB=VALUE...] is the distro's
configuration with those knobs set, when no file has that name
(php84=php.build=debian-8.4).

--engine locust measures every run on Locust instead of phptune's generator
(phptune setup --with-locust; --workers N runs its master with N workers on
this machine). Locust has no warm-up: each run's --warmup is a throwaway
Locust run of the same load first. Its latencies are its rounded buckets.
HTTP only (not a sealed --site lab). See docs/locust.md.

compare --runs RUN_A RUN_B sets stored bench runs side by side: nothing starts.`

// compareExample is phptune compare's examples.
const compareExample = `  phptune compare --app io -c 50 default phptune-tune-RUN/recommended.knobs
  phptune compare --app wordpress --rounds 5 before=default after=recommended.knobs
  phptune compare --docroot ./public --user www-data default tuned=recommended.knobs
  phptune compare --lab mylab default recommended.knobs
  phptune compare --site site.test live default tuned=recommended.knobs
  phptune compare --app io --engine locust --workers 2 default tuned=recommended.knobs
  phptune compare --runs RUN_A RUN_B`
