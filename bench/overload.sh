#!/usr/bin/env bash
# bench/overload.sh — issue 14's bars on this machine (seed 003: overload).
#
# This file holds the capacity part (the io page, open model); the other parts
# (small backlogs at c=1000, several fpm masters, FastCGI keep-alive) are added
# beside it as their own functions.
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
# Usage: bash bench/overload.sh [capacity_io]
# Settings (environment): SLO (p99<1s), MAXERR (0.1%: the error limit of the tune and of
# both capacity searches), BUDGET (15m), CONNS (50), TUNE_DIR (an earlier run's tune
# directory: reuse its recommendation instead of tuning again), OUT
# (bench/out/overload-DATE), PHPTUNE_HOME (a fresh one in /tmp when unset).
set -euo pipefail
cd "$(dirname "$0")/.."

SLO=${SLO:-p99<1s}
MAXERR=${MAXERR:-0.1%}
TUNE_DIR=${TUNE_DIR:-}
BUDGET=${BUDGET:-15m}
CONNS=${CONNS:-50}
OUT=${OUT:-bench/out/overload-$(date +%Y%m%d-%H%M%S)}
BIN=bin/phptune

command -v python3 >/dev/null || { echo "bench/overload.sh needs python3 for the arithmetic: apt-get install python3" >&2; exit 1; }
go build -o "$BIN" ./cmd/phptune
if [[ -z "${PHPTUNE_HOME:-}" ]]; then
	PHPTUNE_HOME=$(mktemp -d /tmp/phptune-bench-XXXX)
	chmod 755 "$PHPTUNE_HOME"
	export PHPTUNE_HOME
fi
mkdir -p "$OUT"

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

parts=${*:-capacity_io}
for p in $parts; do
	"$p"
done
