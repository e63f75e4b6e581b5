#!/usr/bin/env bash
# bench/loadgen.sh — phptune's load generator against wrk and ab, side by side,
# at the same connections and duration, on three targets:
#   static   nginx serving a static file (keep-alive)
#   php      PHP "hello" through nginx -> php-fpm (keep-alive, and a new
#            connection per request)
#   fcgi     PHP "hello" straight to php-fpm over FastCGI (phptune only; no
#            other tool speaks FastCGI)
# For every run it prints requests/second and requests per CPU-second of the
# generator (user+sys of the whole generator process from /usr/bin/time), and
# the ratios the issue's bars are about:
#   phptune req/CPU-s >= 1.0 x wrk's on keep-alive HTTP
#   without keep-alive >= 1.0 x the better of ab and wrk
#   FastCGI direct rps >= 1.2 x through nginx
#
# Usage: bash bench/loadgen.sh            (CONNS=10 DUR=10 ROUNDS=1 by default)
#        CONNS=50 DUR=20 ROUNDS=3 bash bench/loadgen.sh
#        bash bench/loadgen.sh --fallback  (start nginx + php-fpm here, no lab)
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
FALLBACK=0
[[ "${1:-}" == "--fallback" ]] && FALLBACK=1

for b in wrk ab /usr/bin/time; do
  command -v "$b" >/dev/null || { echo "loadgen.sh: $b is missing: apt-get install wrk apache2-utils time" >&2; exit 1; }
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

# run TOOL LABEL CMD... : runs CMD under /usr/bin/time, prints "requests cpu_s rps".
measure() {
  local tool=$1; shift
  local out=$TMP/out.$$ tf=$TMP/time.$$
  /usr/bin/time -o "$tf" -f "%U %S" "$@" >"$out" 2>&1 || { echo "FAILED: $*" >&2; cat "$out" >&2; echo "0 0 0"; return; }
  local cpu req rps
  cpu=$(awk 'END{print $1+$2}' "$tf")
  case $tool in
    wrk) req=$(awk '/requests in/{print $1}' "$out"); rps=$(awk '/Requests\/sec/{print $2}' "$out")
         local errs; errs=$(awk '/Non-2xx|Socket errors/{print}' "$out"); [[ -n "$errs" ]] && echo "  wrk: $errs" >&2 ;;
    ab)  req=$(awk '/Complete requests/{print $3}' "$out"); rps=$(awk '/Requests per second/{print $4}' "$out")
         local f; f=$(awk '/Failed requests/{print $3}' "$out"); [[ "$f" != "0" ]] && echo "  ab: $f failed requests" >&2 ;;
    phptune) req=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["requests"])' "$out")
             rps=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(round(d["throughput_rps"],1)); e=d["errors"]; e and print("  phptune errors:", d.get("errors_by_class"), file=sys.stderr)' "$out" | head -1) ;;
  esac
  echo "$req $cpu $rps"
}

declare -A RES
row() { # key tool req cpu rps
  local per
  per=$(awk -v r="$3" -v c="$4" 'BEGIN{ if (c>0) printf "%.0f", r/c; else print 0 }')
  RES[$1/$2]="$5 $per"
  printf "  %-22s %-8s %10s rps %9s req %7s cpu-s %9s req/cpu-s\n" "$1" "$2" "$5" "$3" "$4" "$per"
}

AB_N=100000000
for round in $(seq "$ROUNDS"); do
  echo "== round $round: -c $CONNS, ${DUR}s, wrk/phptune $THREADS threads"
  for t in static php; do
    path=/static.html; [[ $t == php ]] && path=/index.php
    read -r q c r < <(measure wrk wrk -t"$THREADS" -c"$CONNS" -d"${DUR}s" "$URL$path"); row "$t keep-alive" wrk "$q" "$c" "$r"
    read -r q c r < <(measure ab ab -q -k -c"$CONNS" -t"$DUR" -n $AB_N "$URL$path"); row "$t keep-alive" ab "$q" "$c" "$r"
    read -r q c r < <(measure phptune bin/phptune bench -q --json -t "$THREADS" -c "$CONNS" -d "${DUR}s" "$URL$path"); row "$t keep-alive" phptune "$q" "$c" "$r"
  done
  t="php close"
  read -r q c r < <(measure wrk wrk -t"$THREADS" -c"$CONNS" -d"${DUR}s" -H 'Connection: close' "$URL/index.php"); row "$t" wrk "$q" "$c" "$r"
  read -r q c r < <(measure ab ab -q -c"$CONNS" -t"$DUR" -n $AB_N "$URL/index.php"); row "$t" ab "$q" "$c" "$r"
  read -r q c r < <(measure phptune bin/phptune bench -q --json --no-keepalive -t "$THREADS" -c "$CONNS" -d "${DUR}s" "$URL/index.php"); row "$t" phptune "$q" "$c" "$r"
  read -r q c r < <(measure phptune bin/phptune bench -q --json -t "$THREADS" -c "$CONNS" -d "${DUR}s" "fcgi://unix:$FPM$DOCROOT/index.php"); row "php fcgi-direct" phptune "$q" "$c" "$r"

  ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b>0) printf "%.2f", a/b; else print "n/a" }'; }
  per() { echo "${RES[$1]}" | awk '{print $2}'; }
  rps() { echo "${RES[$1]}" | awk '{print $1}'; }
  echo "-- ratios (round $round)"
  echo "  static keep-alive: phptune/wrk req/cpu-s $(ratio "$(per 'static keep-alive/phptune')" "$(per 'static keep-alive/wrk')")  (bar >= 1.0); phptune/ab $(ratio "$(per 'static keep-alive/phptune')" "$(per 'static keep-alive/ab')")"
  echo "  php keep-alive:    phptune/wrk req/cpu-s $(ratio "$(per 'php keep-alive/phptune')" "$(per 'php keep-alive/wrk')")  (bar >= 1.0); phptune/ab $(ratio "$(per 'php keep-alive/phptune')" "$(per 'php keep-alive/ab')")"
  best=$(awk -v a="$(per 'php close/wrk')" -v b="$(per 'php close/ab')" 'BEGIN{print (a>b)?a:b}')
  echo "  php close:         phptune/best(ab,wrk) req/cpu-s $(ratio "$(per 'php close/phptune')" "$best")  (bar >= 1.0)"
  echo "  fcgi direct / through nginx rps (phptune, both -c $CONNS): $(ratio "$(rps 'php fcgi-direct/phptune')" "$(rps 'php keep-alive/phptune')")  (bar >= 1.2)"
done
