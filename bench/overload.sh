#!/usr/bin/env bash
# bench/overload.sh — issue 14's bars on this machine (seed 003: overload).
#
# Three parts, each a function (run one by naming it): capacity_io (the io page's
# capacity, open model), backlog_hello (seed 003's 502s at c=1000 from small backlogs,
# then the tune that removes them) and topology (several php-fpm pools and FastCGI
# keep-alive against one pool without, with their intervals).
#
# capacity_io: the io page (20 ms on MariaDB per request) at p99 < $SLO:
#   1. `phptune tune --app io --objective capacity --slo $SLO` (time budget $BUDGET),
#      which also measures both capacities itself after its holdout;
#   2. `phptune capacity` of the distro default and of the recommendation, each on a
#      lab of its own, measured the same way (probe, ramp, bisection, drift check);
#   3. `phptune bench` of the recommendation in the open model at the default's
#      capacity rate: its p99.
# It prints the capacity ratio recommended/default with the range the two brackets
# allow, and checks the bars: ratio ≥ 6, and the recommendation's p99 at the default's
# capacity rate < 100 ms.
#
# Usage: bash bench/overload.sh [capacity_io] [backlog_hello] [topology]
# Settings (environment): SLO (p99<1s), MAXERR (0.1%: the error limit of the tune and of
# both capacity searches), BUDGET (15m), CONNS (50), TUNE_BUDGET (8m: backlog_hello's
# tune), RUNS (3: backlog_hello's runs of each), ROUNDS (5) and TOPO_CONNS (500) for
# topology, TUNE_DIR (an earlier run's tune
# directory: reuse its recommendation instead of tuning again), OUT
# (bench/out/overload-DATE), PHPTUNE_HOME (a fresh one in /tmp when unset).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

SLO=${SLO:-p99<1s}
MAXERR=${MAXERR:-0.1%}
TUNE_DIR=${TUNE_DIR:-}
BUDGET=${BUDGET:-15m}
CONNS=${CONNS:-50}
TUNE_BUDGET=${TUNE_BUDGET:-8m}
RUNS=${RUNS:-3}
ROUNDS=${ROUNDS:-5}
TOPO_CONNS=${TOPO_CONNS:-500}

bench_start overload

# field FILE EXPR: a figure from a JSON result.
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

capacity_io() {
	local d=$OUT/capacity-io
	mkdir -p "$d"
	echo "== capacity_io: io page, $SLO, errors <= $MAXERR, $(nproc) cores, $(date -u +%FT%TZ)"
	local t0 tune=$d/tune
	t0=$(date +%s)
	if [[ -n $TUNE_DIR ]]; then
		tune=$TUNE_DIR
		echo "tune: reusing $tune"
	else
		"$BIN" tune --app io -c "$CONNS" --objective capacity --slo "$SLO" --max-errors "$MAXERR" --time-budget "$BUDGET" -o "$tune" \
			>"$d/tune.txt" 2>"$d/tune.log"
		echo "tune: $(( $(date +%s) - t0 )) s; $tune/summary.txt"
	fi
	field "$tune/result.json" "'tune\'s own capacity searches: start %s [%s], recommended %s [%s], ratio %.2f' % (d['capacity']['start']['capacity_rps'], d['capacity']['start'].get('first_fail_rps','-'), d['capacity']['recommended']['capacity_rps'], d['capacity']['recommended'].get('first_fail_rps','-'), d['capacity'].get('capacity_ratio',0))" || true

	"$BIN" capacity --app io --slo "$SLO" --max-errors "$MAXERR" --no-save --json >"$d/default.json" 2>"$d/default.log"
	"$BIN" capacity --app io --slo "$SLO" --max-errors "$MAXERR" --knobs "$tune/recommended.knobs" --no-save --json >"$d/tuned.json" 2>"$d/tuned.log"
	local dc df tc tf
	dc=$(field "$d/default.json" "d['capacity_rps']")
	df=$(field "$d/default.json" "d.get('first_fail_rps',0)")
	tc=$(field "$d/tuned.json" "d['capacity_rps']")
	tf=$(field "$d/tuned.json" "d.get('first_fail_rps',0)")
	echo "default:     capacity $dc rps (first failure $df), $(field "$d/default.json" "d['outcome'] + (', confirmed' if d['confirmed'] else ', not confirmed')")"
	echo "recommended: capacity $tc rps (first failure $tf), $(field "$d/tuned.json" "d['outcome'] + (', confirmed' if d['confirmed'] else ', not confirmed')")"
	python3 - "$dc" "$df" "$tc" "$tf" <<'EOF'
import sys
dc, df, tc, tf = map(float, sys.argv[1:])
if dc <= 0:
    print("ratio: the default has no capacity at this SLO")
    sys.exit(0)
lo = tc / df if df > 0 else float('nan')
hi = tf / dc if tf > 0 else float('nan')
r = tc / dc
print(f"capacity ratio recommended/default: {r:.2f}x (the brackets allow {lo:.2f}x to {hi:.2f}x); bar >= 6x: {'met' if r >= 6 else 'MISSED'}")
EOF

	# The recommendation at the default's capacity rate: its p99.
	local name=overload-cap-$$
	"$BIN" lab up --name "$name" --app io --knobs "$tune/recommended.knobs" >"$d/lab-up.log" 2>&1
	local conns
	conns=$(python3 -c "import math,sys; print(max(16, math.ceil(2*float(sys.argv[1])*1.0)+8))" "$dc")
	"$BIN" bench --lab "$name" --rate "$dc" -c "$conns" -d 30s --warmup 5s --no-save --json >"$d/tuned-at-default-rate.json" 2>"$d/tuned-at-default-rate.log" || true
	"$BIN" lab down "$name" >/dev/null 2>&1 || true
	local p99
	p99=$(field "$d/tuned-at-default-rate.json" "d['latency']['latency_p99_ms']")
	python3 - "$dc" "$p99" <<'EOF'
import sys
rate, p99 = float(sys.argv[1]), float(sys.argv[2])
print(f"recommended at the default's capacity rate ({rate:g} rps, 30 s): p99 {p99:.1f} ms; bar < 100 ms: {'met' if p99 < 100 else 'MISSED'}")
EOF
}

# backlog_hello: seed 003's 502s. The start has the small backlogs of many images
# (listen.backlog=128, nginx.listen_backlog=128); `phptune tune --app hello -c 1000`
# from it (time budget $TUNE_BUDGET) gives the recommendation; then both run on labs
# of their own, alternately, $RUNS times at c=1000 (closed model, 10 s each). Bars: the
# start shows >= 0.5% errors classified as backlog-full; the recommendation shows 0
# backlog-class errors and <= 0.01% errors in all in every run, and throughput (median)
# >= the start's.
backlog_hello() {
	local d=$OUT/backlog-hello
	mkdir -p "$d"
	echo "== backlog_hello: hello at c=1000, small backlogs against the tune from them, $(nproc) cores, somaxconn $(cat /proc/sys/net/core/somaxconn), $(date -u +%FT%TZ)"
	printf 'listen.backlog=128\nnginx.listen_backlog=128\n' >"$d/start.knobs"
	local tune=$d/tune t0
	t0=$(date +%s)
	"$BIN" tune --app hello -c 1000 --knobs "$d/start.knobs" --time-budget "$TUNE_BUDGET" -o "$tune" >"$d/tune.txt" 2>"$d/tune.log"
	echo "tune: $(( $(date +%s) - t0 )) s; changes: $(grep -v '^#' "$tune/recommended.knobs" | tr '\n' ' ')"
	local a=overload-start-$$ b=overload-tuned-$$
	"$BIN" lab up --name "$a" --app hello --knobs "$d/start.knobs" >"$d/lab-start.log" 2>&1
	"$BIN" lab up --name "$b" --app hello --knobs "$tune/recommended.knobs" >"$d/lab-tuned.log" 2>&1
	for i in $(seq 1 "$RUNS"); do
		"$BIN" bench --lab "$a" -c 1000 -d 10s --warmup 2s --no-save --json >"$d/start-$i.json" 2>"$d/start-$i.log" || true
		"$BIN" bench --lab "$b" -c 1000 -d 10s --warmup 2s --no-save --json >"$d/tuned-$i.json" 2>"$d/tuned-$i.log" || true
	done
	"$BIN" lab down "$a" >/dev/null 2>&1 || true
	"$BIN" lab down "$b" >/dev/null 2>&1 || true
	python3 - "$d" "$RUNS" <<'EOF'
import json, statistics, sys
d, runs = sys.argv[1], int(sys.argv[2])
def run(name, i):
    r = json.load(open(f"{d}/{name}-{i}.json"))
    classes = (r.get("server_errors") or {}).get("classes") or []
    backlog = sum(c.get("requests") or c["lines"] for c in classes if "backlog_full" in c["class"])
    backlog += (r.get("errors_by_class") or {}).get("connect_backlog_full", 0)
    return r["throughput_rps"], r["requests"], r["errors"], backlog
rows = {n: [run(n, i) for i in range(1, runs + 1)] for n in ("start", "tuned")}
for n, rs in rows.items():
    for i, (rps, req, err, bl) in enumerate(rs, 1):
        print(f"{n:6s} run {i}: {rps:8.1f} rps, {req} requests, {err} errors ({100*err/max(req,1):.3f}%), {bl} backlog-full")
med = {n: statistics.median(r[0] for r in rs) for n, rs in rows.items()}
s_err = min(100 * r[2] / max(r[1], 1) for r in rows["start"])
s_bl = min(r[3] for r in rows["start"])
t_err = max(100 * r[2] / max(r[1], 1) for r in rows["tuned"])
t_bl = max(r[3] for r in rows["tuned"])
print(f"start: errors >= {s_err:.3f}% in every run, backlog-full >= {s_bl}; bar >= 0.5% classified backlog-full: {'met' if s_err >= 0.5 and s_bl > 0 else 'MISSED'}")
print(f"tuned: errors <= {t_err:.4f}% in every run, backlog-full <= {t_bl}; bar 0 backlog-class and <= 0.01%: {'met' if t_bl == 0 and t_err <= 0.01 else 'MISSED'}")
print(f"throughput median: start {med['start']:.1f}, tuned {med['tuned']:.1f} rps, ratio {med['tuned']/med['start']:.2f}; bar >= 1: {'met' if med['tuned'] >= med['start'] else 'MISSED'}")
EOF
}

# topology: several pools behind nginx's upstream against one pool, and kept FastCGI
# connections (nginx upstream keepalive + fastcgi_keep_conn) against none, on hello and
# strings at c=$TOPO_CONNS, interleaved by `phptune compare` ($ROUNDS rounds), from one
# base: a static pool of 8 with backlogs raised for the connections. Prints each
# variant's throughput ratio to the base with its 95% interval and the p99s; no bar
# but the truth ("no significant difference" when the interval holds 1).
topology() {
	local d=$OUT/topology
	mkdir -p "$d"
	echo "== topology: pools and FastCGI keep-alive, c=$TOPO_CONNS, $ROUNDS rounds, $(nproc) cores, $(date -u +%FT%TZ)"
	printf 'pm=static\npm.max_children=8\nlisten.backlog=1024\nnginx.listen_backlog=1024\nnginx.worker_connections=2048\n' >"$d/one.knobs"
	(cat "$d/one.knobs"; echo fpm.pools=2) >"$d/pools2.knobs"
	(cat "$d/one.knobs"; echo fpm.pools=4) >"$d/pools4.knobs"
	# nginx runs a worker per core (2 here): 3 kept per worker leave 2 of the 8 free.
	(cat "$d/one.knobs"; echo nginx.fastcgi_keepalive=3) >"$d/keepalive3.knobs"
	for app in hello strings; do
		"$BIN" compare --app "$app" -c "$TOPO_CONNS" --rounds "$ROUNDS" one="$d/one.knobs" pools2="$d/pools2.knobs" \
			pools4="$d/pools4.knobs" keepalive3="$d/keepalive3.knobs" --json >"$d/$app.json" 2>"$d/$app.log"
		python3 - "$d/$app.json" "$app" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["summary"]:
    lo, hi = s["throughput_ratio_ci_low"], s["throughput_ratio_ci_high"]
    verdict = "" if s["label"] == "one" else ("  no significant difference" if lo <= 1 <= hi else ("  faster" if lo > 1 else "  slower"))
    print(f"{sys.argv[2]:8s} {s['label']:10s} {s['throughput_rps_median']:9.1f} rps  x{s['throughput_ratio']:.2f} [{lo:.2f}, {hi:.2f}]  p99 {s['latency_p99_ms_median']:7.1f} ms (x{s['p99_ratio']:.2f})  errors {100*s['error_rate_mean']:.3f}%{verdict}")
EOF
	done
}

parts=${*:-capacity_io backlog_hello topology}
for p in $parts; do
	"$p"
done
