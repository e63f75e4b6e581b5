#!/usr/bin/env bash
# bench/loadgen.sh — phptune's load generator against wrk and ab, side by side,
# at the same connections and duration, on three targets:
#   static   nginx serving a static file (keep-alive)
#   php      PHP "hello" through nginx -> php-fpm (keep-alive, and a new
#            connection per request)
#   fcgi     PHP "hello" straight to php-fpm over FastCGI (phptune only; no
#            other tool speaks FastCGI)
# For every run it prints requests/second and requests per CPU-second of the
# generator process (user+sys of all its threads, read from /proc when it
# exits), the same including the child processes it ran and waited for (what
# /usr/bin/time reports: phptune bench asks php -v, nginx -v, ... for the
# environment's versions unless cached; wrk and ab run none), and the ratios the
# issue's bars are about, per round and as medians over the rounds:
#   phptune req/CPU-s >= 1.0 x wrk's on keep-alive HTTP
#   without keep-alive >= 1.0 x the better of ab and wrk
#   FastCGI direct rps >= 1.2 x through nginx
#
# Usage: bash bench/loadgen.sh            (CONNS=10 DUR=10 ROUNDS=1 by default)
#        CONNS=50 DUR=20 ROUNDS=3 bash bench/loadgen.sh
#        bash bench/loadgen.sh --fallback  (start nginx + php-fpm here, no lab)
#        PHPTUNE=/tmp/phptune-old bash bench/loadgen.sh  (measure another build)
#
# Target: `bin/phptune lab up --name loadgen --app hello`. With --fallback, or
# when the lab cannot start, the script renders its own nginx + php-fpm (pool
# as the distro ships it: dynamic, 5 children) in a temporary directory and
# removes it on exit. Numbers on a shared 2-core VM move ±20% run to run:
# use ROUNDS>1 and read the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
CONNS=${CONNS:-10}
DUR=${DUR:-10}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-1}
PHPTUNE=${PHPTUNE:-bin/phptune} # the phptune that generates load (labs use bin/phptune)
FALLBACK=0
[[ "${1:-}" == "--fallback" ]] && FALLBACK=1

for b in wrk ab python3; do
  command -v "$b" >/dev/null || { echo "loadgen.sh: $b is missing: apt-get install wrk apache2-utils python3" >&2; exit 1; }
done
[[ -x bin/phptune ]] || go build -o bin/phptune ./cmd/phptune

TMP=$(mktemp -d /tmp/phptune-loadgen.XXXXXX)
chmod 755 "$TMP"
PIDS=()
LAB_UP=0
cleanup() {
  for p in "${PIDS[@]:-}"; do [[ -n "$p" ]] && kill -- -"$p" 2>/dev/null || true; done
  [[ $LAB_UP == 1 ]] && bin/phptune lab down loadgen >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT

# cputime OUT CMD...: runs CMD and writes "user sys children_user children_sys"
# (seconds) to OUT, read from /proc/PID/stat once CMD has exited but before it
# is reaped, so the process's own CPU and its children's can be told apart.
cat >"$TMP/cputime.py" <<'EOF'
import os, sys
out, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
with open("/proc/%d/stat" % pid) as f:
    st = f.read().rsplit(")", 1)[1].split()
tck = float(os.sysconf("SC_CLK_TCK"))
times = [int(x) / tck for x in st[11:15]]  # utime stime cutime cstime
_, status = os.waitpid(pid, 0)
with open(out, "w") as f:
    f.write("%.2f %.2f %.2f %.2f\n" % tuple(times))
sys.exit(os.waitstatus_to_exitcode(status))
EOF

start_fallback() {
  local port sock user=""
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  sock=$TMP/fpm.sock
  mkdir -p "$TMP/www" "$TMP/tmp"
  printf '<?php\necho "Hello, world!\\n";\n' >"$TMP/www/index.php"
  printf '<!doctype html><title>static</title><p>Hello, static world!</p>\n' >"$TMP/www/static.html"
  chmod -R a+rX "$TMP"
  [[ $(id -u) == 0 ]] && user="user = www-data
group = www-data"
  cat >"$TMP/fpm.conf" <<EOF
[global]
error_log = $TMP/fpm.log
pid = $TMP/fpm.pid
daemonize = no
[www]
$user
listen = $sock
listen.mode = 0666
pm = dynamic
pm.max_children = 5
pm.start_servers = 2
pm.min_spare_servers = 1
pm.max_spare_servers = 3
EOF
  cat >"$TMP/nginx.conf" <<EOF
$([[ $(id -u) == 0 ]] && echo "user www-data;")
daemon off;
worker_processes auto;
pid $TMP/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $TMP/tmp; proxy_temp_path $TMP/tmp; fastcgi_temp_path $TMP/tmp;
  uwsgi_temp_path $TMP/tmp; scgi_temp_path $TMP/tmp;
  server {
    listen 127.0.0.1:$port;
    root $TMP/www;
    index index.php;
    location ~ \.php\$ {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      fastcgi_pass unix:$sock;
    }
  }
}
EOF
  setsid /usr/sbin/php-fpm8.2 -F -y "$TMP/fpm.conf" >"$TMP/fpm.out" 2>&1 & PIDS+=($!)
  setsid /usr/sbin/nginx -p "$TMP" -c "$TMP/nginx.conf" -e "$TMP/error.log" >"$TMP/nginx.out" 2>&1 & PIDS+=($!)
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/index.php" >/dev/null 2>&1 && break; sleep 0.1; done
  URL=http://127.0.0.1:$port
  FPM=$sock
  DOCROOT=$TMP/www
  echo "target: fallback nginx + php-fpm in $TMP ($URL, $FPM)"
}

if [[ $FALLBACK == 0 ]] && bin/phptune lab up --name loadgen --app hello >"$TMP/lab.out" 2>&1; then
  LAB_UP=1
  bin/phptune lab status loadgen --json >"$TMP/lab.json"
  URL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"].rstrip("/"))' "$TMP/lab.json")
  FPM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fpm_listen"].split(":",1)[1])' "$TMP/lab.json")
  DOCROOT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["docroot"])' "$TMP/lab.json")
  echo "target: lab loadgen ($URL, $FPM)"
else
  [[ $FALLBACK == 0 ]] && { echo "lab up failed, using the fallback:"; tail -3 "$TMP/lab.out"; }
  start_fallback
fi

# measure TOOL CMD... : runs CMD, prints "requests cpu_s rps cpu_s_with_children".
measure() {
  local tool=$1; shift
  local out=$TMP/out.$$ tf=$TMP/time.$$
  python3 "$TMP/cputime.py" "$tf" "$@" >"$out" 2>&1 || { echo "FAILED: $*" >&2; cat "$out" >&2; echo "0 0 0 0"; return; }
  local cpu all req rps
  cpu=$(awk 'END{print $1+$2}' "$tf")
  all=$(awk 'END{print $1+$2+$3+$4}' "$tf")
  case $tool in
    wrk) req=$(awk '/requests in/{print $1}' "$out"); rps=$(awk '/Requests\/sec/{print $2}' "$out")
         local errs; errs=$(awk '/Non-2xx|Socket errors/{print}' "$out"); [[ -n "$errs" ]] && echo "  wrk: $errs" >&2 ;;
    ab)  req=$(awk '/Complete requests/{print $3}' "$out"); rps=$(awk '/Requests per second/{print $4}' "$out")
         local f; f=$(awk '/Failed requests/{print $3}' "$out"); [[ "$f" != "0" ]] && echo "  ab: $f failed requests" >&2 ;;
    phptune) req=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["requests"])' "$out")
             rps=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(round(d["throughput_rps"],1)); e=d["errors"]; e and print("  phptune errors:", d.get("errors_by_class"), file=sys.stderr)' "$out" | head -1) ;;
  esac
  echo "$req $cpu $rps $all"
}

declare -A RES
row() { # key tool req cpu rps cpu_with_children
  local per perall
  per=$(awk -v r="$3" -v c="$4" 'BEGIN{ if (c>0) printf "%.0f", r/c; else print 0 }')
  perall=$(awk -v r="$3" -v c="$6" 'BEGIN{ if (c>0) printf "%.0f", r/c; else print 0 }')
  RES[$1/$2]="$5 $per $perall"
  printf "  %-22s %-8s %10s rps %9s req %7s cpu-s %9s req/cpu-s  (%s with children)\n" "$1" "$2" "$5" "$3" "$4" "$per" "$perall"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b>0) printf "%.2f", a/b; else print "n/a" }'; }
per() { echo "${RES[$1]}" | awk '{print $2}'; }
perall() { echo "${RES[$1]}" | awk '{print $3}'; }
rps() { echo "${RES[$1]}" | awk '{print $1}'; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END{ if (NR==0) print "n/a"; else if (NR%2) print v[(NR+1)/2]; else printf "%.2f", (v[NR/2]+v[NR/2+1])/2 }'; }
declare -A ALL # ratio name -> the rounds' values

AB_N=100000000
for round in $(seq "$ROUNDS"); do
  echo "== round $round: -c $CONNS, ${DUR}s, wrk/phptune $THREADS threads"
  for t in static php; do
    path=/static.html; [[ $t == php ]] && path=/index.php
    read -r q c r a < <(measure wrk wrk -t"$THREADS" -c"$CONNS" -d"${DUR}s" "$URL$path"); row "$t keep-alive" wrk "$q" "$c" "$r" "$a"
    read -r q c r a < <(measure ab ab -q -k -c"$CONNS" -t"$DUR" -n $AB_N "$URL$path"); row "$t keep-alive" ab "$q" "$c" "$r" "$a"
    read -r q c r a < <(measure phptune "$PHPTUNE" bench -q --json --no-save -t "$THREADS" -c "$CONNS" -d "${DUR}s" "$URL$path"); row "$t keep-alive" phptune "$q" "$c" "$r" "$a"
  done
  t="php close"
  read -r q c r a < <(measure wrk wrk -t"$THREADS" -c"$CONNS" -d"${DUR}s" -H 'Connection: close' "$URL/index.php"); row "$t" wrk "$q" "$c" "$r" "$a"
  read -r q c r a < <(measure ab ab -q -c"$CONNS" -t"$DUR" -n $AB_N "$URL/index.php"); row "$t" ab "$q" "$c" "$r" "$a"
  read -r q c r a < <(measure phptune "$PHPTUNE" bench -q --json --no-save --no-keepalive -t "$THREADS" -c "$CONNS" -d "${DUR}s" "$URL/index.php"); row "$t" phptune "$q" "$c" "$r" "$a"
  read -r q c r a < <(measure phptune "$PHPTUNE" bench -q --json --no-save -t "$THREADS" -c "$CONNS" -d "${DUR}s" "fcgi://unix:$FPM$DOCROOT/index.php"); row "php fcgi-direct" phptune "$q" "$c" "$r" "$a"

  best=$(awk -v a="$(per 'php close/wrk')" -v b="$(per 'php close/ab')" 'BEGIN{print (a>b)?a:b}')
  bestall=$(awk -v a="$(perall 'php close/wrk')" -v b="$(perall 'php close/ab')" 'BEGIN{print (a>b)?a:b}')
  r1=$(ratio "$(per 'static keep-alive/phptune')" "$(per 'static keep-alive/wrk')"); r1a=$(ratio "$(perall 'static keep-alive/phptune')" "$(perall 'static keep-alive/wrk')")
  r2=$(ratio "$(per 'php keep-alive/phptune')" "$(per 'php keep-alive/wrk')"); r2a=$(ratio "$(perall 'php keep-alive/phptune')" "$(perall 'php keep-alive/wrk')")
  r3=$(ratio "$(per 'php close/phptune')" "$best"); r3a=$(ratio "$(perall 'php close/phptune')" "$bestall")
  r4=$(ratio "$(rps 'php fcgi-direct/phptune')" "$(rps 'php keep-alive/phptune')")
  ALL[static]+=" $r1"; ALL[statica]+=" $r1a"; ALL[php]+=" $r2"; ALL[phpa]+=" $r2a"
  ALL[close]+=" $r3"; ALL[closea]+=" $r3a"; ALL[fcgi]+=" $r4"
  echo "-- ratios (round $round; req/cpu-s of the process, and with its children)"
  echo "  static keep-alive: phptune/wrk $r1 ($r1a)  (bar >= 1.0); phptune/ab $(ratio "$(per 'static keep-alive/phptune')" "$(per 'static keep-alive/ab')")"
  echo "  php keep-alive:    phptune/wrk $r2 ($r2a)  (bar >= 1.0); phptune/ab $(ratio "$(per 'php keep-alive/phptune')" "$(per 'php keep-alive/ab')")"
  echo "  php close:         phptune/best(ab,wrk) $r3 ($r3a)  (bar >= 1.0)"
  echo "  fcgi direct / through nginx rps (phptune, both -c $CONNS): $r4  (bar >= 1.2)"
done
if [[ $ROUNDS -gt 1 ]]; then
  echo "== medians over $ROUNDS rounds (req/cpu-s of the process; with its children in brackets)"
  echo "  static keep-alive phptune/wrk:   $(median <<<"${ALL[static]}") ($(median <<<"${ALL[statica]}"))  (bar >= 1.0)  rounds:${ALL[static]}"
  echo "  php keep-alive phptune/wrk:      $(median <<<"${ALL[php]}") ($(median <<<"${ALL[phpa]}"))  (bar >= 1.0)  rounds:${ALL[php]}"
  echo "  php close phptune/best(ab,wrk):  $(median <<<"${ALL[close]}") ($(median <<<"${ALL[closea]}"))  (bar >= 1.0)  rounds:${ALL[close]}"
  echo "  fcgi direct / through nginx rps: $(median <<<"${ALL[fcgi]}")  (bar >= 1.2)  rounds:${ALL[fcgi]}"
fi
