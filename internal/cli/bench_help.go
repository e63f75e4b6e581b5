package cli

// benchLong is phptune bench's --help text.
const benchLong = `bench sends requests to TARGET and reports throughput, latency percentiles
(HdrHistogram), errors by class, and what the generator itself cost.

TARGET is one of
  http://127.0.0.1:PORT/path?query
  fcgi://unix:/run/php/php-fpm.sock/srv/www/index.php   (socket path, then the script)
  fcgi://127.0.0.1:9000/srv/www/index.php
or --lab NAME (with --app-path and --fcgi to talk to the lab's php-fpm directly).
FastCGI requests carry the parameters nginx's fastcgi_params would send.

Closed model: -c connections each send a request as soon as the previous one
is answered, for -d DURATION or -n REQUESTS. Open model: --rate sends requests
at a fixed schedule whatever the server does ("1000", a ramp "500..2000" or
steps "500,1000,2000" over -d), and latency counts from each request's
intended send time, so queueing is not hidden (no coordinated omission).

Errors are counted by class: connect_refused, connect_timeout,
connect_backlog_full, reset, closed_early, read_timeout, protocol,
fcgi_overloaded, fcgi_stderr, length_mismatch, redirect, status_4xx,
status_5xx, unexpected_status, unexpected_body. A 3xx answer is a redirect
error: redirects are not followed, so it timed the redirect, not the page.
A request may expect a status instead (the comment workload's POST expects
WordPress's 302, a scenario line's "=> 302", a log path the log answered
mostly with a redirect): then that status is the success and any other one,
2xx included (unexpected_status), is an error.

--expect REGEX (Go RE2 syntax) counts 2xx responses whose body does not match
as unexpected_body errors: an app's error or setup page served with status
200 is then not measured as the page. It is matched against the first 64 KiB
of each body (HTTP or FastCGI, chunked or not); responses to HEAD and 204 have
none, and 3xx, 4xx and 5xx are errors already (an expected status, such as a
comment POST's 302, is a success whose body is not matched). Without --expect
no body byte is kept.

With --lab, bench first GETs the page once and prints its status, size and
<title>, warning when the page is an error, a redirect, or its title reads
like an error, setup or maintenance page.

--workload-from-log FILE replays the traffic of an nginx or Apache access log
(common or combined format, or gzip-compressed): its top 50 paths by count,
weighted by their counts, query strings kept; GET and HEAD only unless
--allow-post (POSTs then go with an empty form body: logs do not record
bodies); static files (css, js, images, fonts, media, archives, txt, html)
and 4xx answers left out; malformed lines counted and skipped. The scenario
is printed to stderr before the run.

Scenario files (--scenario) hold weighted requests, one per line:
  # WEIGHT METHOD PATH [FORM BODY]
  8 GET /index.php
  1 POST /wp-comments-post.php comment=Hi&author=b&email=b%40example.com
      X-Header: indented lines add headers to the request above
      => 302   the status the request above answers when it works (default: any 2xx)

The kernel's limits on queued and open connections (net.core.somaxconn, which
caps every listen backlog, tcp_max_syn_backlog, the port range, tcp_tw_reuse,
fs.file-max, fs.nr_open, open-file limits) are read and shown, with a lab's
backlogs as asked and as the kernel gives them. They are changed only with
--apply-sysctl (root): raised for this run, a lab's servers restarted so
their sockets listen under them, and restored at the end.

Only loopback targets are allowed unless --allow-remote is given. --json
writes the result record (docs/results-schema.md) to stdout; a progress line
goes to stderr when it is a terminal.

The command line is recorded with the result, secrets redacted first: the
values of credential headers (Authorization, Cookie, and names with key,
token, pass, password, passwd, secret, auth or session, such as X-Api-Key),
of such form fields in --body and query parameters in the URL, and a URL's
password become <redacted> in the results database, the JSON, the text and
the HTML report. --redact NAME adds a name; --body-file and --scenario
contents are never recorded.

--engine locust runs the same workload on Locust (phptune setup --with-locust
installs it) as the lab's account: -c users, --rate as each user's constant
throughput (no coordinated-omission correction: the output says how far the
achieved rate fell short), --workers N worker processes behind Locust's
master, or --master-bind ADDR:PORT --expect-workers N for workers started on
other machines (the command to start them is printed). Latencies are Locust's
rounded buckets. --warmup is a throwaway Locust run of the same load first
(not with --expect-workers: workers quit with their master). HTTP only, not a
unix socket; no -n or ramps. See docs/locust.md.`

// benchExample is phptune bench's examples.
const benchExample = `  phptune bench -c 10 -d 10s http://127.0.0.1:8080/index.php
  phptune bench -c 50 --rate 2000 -d 30s --warmup 5s http://127.0.0.1:8080/
  phptune bench -c 8 -n 100000 fcgi://unix:/run/php/php8.2-fpm.sock/var/www/html/index.php
  phptune bench --lab demo --fcgi --app-path /index.php -c 10 -d 10s --json
  phptune bench --no-keepalive -c 10 -d 10s http://127.0.0.1:8080/index.php`
