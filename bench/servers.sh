#!/usr/bin/env bash
# bench/servers.sh — web servers side by side, each tuned first (issue 13), in one
# run on this machine:
#
#   1. `phptune servers` on the WordPress front page at -c 10: every server that can
#      run here (the values of the server knob) tuned under an equal share of
#      $BUDGET, then every tuned server and every server's default measured in
#      interleaved rounds, each run in fresh processes. Printed: the ranking with
#      throughput and p99 and their 95% intervals, each configuration against the
#      best (paired by round), and per server tuned ÷ default with its interval and
#      the issue's bar (tuned ≥ default, or no significant difference).
#   2. Seed 002 reproduced, when this phptune has server=unit and Unit can run here
#      (a line says why not otherwise): Unit with 20 processes against php-fpm
#      `pm = static`, 10 children (added configurations, untuned) beside Unit's and
#      nginx-fpm's defaults and both tuned, on `strings` and on WordPress; printed:
#      unit-20 ÷ fpm-static-10 with its interval, each one's worker imbalance and
#      per-worker CPU, and phptune's diagnosis.
#
# Not run by any test: part 1 takes $BUDGET (an hour by default), part 2
# $SEED_BUDGET per page. The machine should be quiet: the comparison is interleaved,
# but a neighbour's load widens every interval.
#
# Usage: bash bench/servers.sh
# Unit runs from unitd on PATH or a build in $PHPTUNE_HOME/builds: with UNIT_SOURCE set
# (e.g. ../shared/vendor/unit-1.35.0.tar.gz) the script first runs `phptune build unit
# --source $UNIT_SOURCE` (~30 s here; cached). Without either, part 1 names Unit as not
# compared and part 2 says it is skipped.
# Settings (environment): PAGE (wordpress:front), SERVERS (every one that can run),
# CONNS (10), BUDGET (60m), SEED_PAGES ("strings:front wordpress:front"),
# SEED_BUDGET (30m), ROUNDS (4), DUR/CWARM (10s/3s, comparison runs),
# TRIAL/WARM (10s/3s, tune trials), SKIP_SEED=1, UNIT_SOURCE, OUT (bench/out/servers-DATE).
# A smoke run: PAGE=hello:front SERVERS=nginx-fpm,apache-prefork-modphp BUDGET=2m \
#   ROUNDS=2 DUR=1s CWARM=200ms TRIAL=1s WARM=200ms SKIP_SEED=1 bash bench/servers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

PAGE=${PAGE:-wordpress:front}
SERVERS=${SERVERS:-}
CONNS=${CONNS:-10}
BUDGET=${BUDGET:-60m}
SEED_PAGES=${SEED_PAGES:-strings:front wordpress:front}
SEED_BUDGET=${SEED_BUDGET:-30m}
ROUNDS=${ROUNDS:-4}
DUR=${DUR:-10s}
CWARM=${CWARM:-3s}
TRIAL=${TRIAL:-10s}
WARM=${WARM:-3s}
SKIP_SEED=${SKIP_SEED:-0}
OUT=${OUT:-bench/out/servers-$(date +%Y%m%d-%H%M%S)}
BIN=bin/phptune

bench_build bench/servers.sh
bench_home
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
echo "bench/servers.sh: $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), page $PAGE, -c $CONNS, budget $BUDGET, $ROUNDS rounds of $DUR+$CWARM, tune trials $TRIAL+$WARM, out $OUT"

if [[ -n ${UNIT_SOURCE:-} ]]; then
	echo "building NGINX Unit from $UNIT_SOURCE (phptune build unit; cached)"
	"$BIN" build unit --source "$UNIT_SOURCE" >"$OUT/build-unit.log" 2>&1 || { echo "phptune build unit failed: see $OUT/build-unit.log"; }
fi

# summarize prints what the issue's bars read from a servers result (--json).
summarize() {
	python3 - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
def iv(x):
    if not x or not x.get("value"):
        return "-"
    if not x.get("ci_high"):
        return f"{x['value']:.1f}"
    return f"{x['value']:.1f} [{x['ci_low']:.1f}, {x['ci_high']:.1f}]"
def ratio(x):
    if not x:
        return "-"
    if not x.get("ci_high"):
        return f"{x['ratio']:.2f}× (no interval)"
    return f"{x['ratio']:.2f}× [{x['ci_low']:.2f}, {x['ci_high']:.2f}]"
print(f"{r['app']} {r['workload']}, {r['connections']} connections, {r['rounds_run']} of {r['rounds']} rounds, tunes of {r['tune_budget_s']:.0f} s each, {r['wall_s']/60:.1f} min in all" + (" — INTERRUPTED" if r.get("interrupted") else ""))
rows = sorted(r["configs"], key=lambda c: (c.get("rank") or 999))
print(f"{'rank':4} {'configuration':36} {'rps (95% CI)':24} {'÷ best (95% CI)':26} {'p99 ms (95% CI)':24} {'errors':>7} {'imbalance':>10} {'workers':>7}")
for c in rows:
    if not c.get("rank"):
        print(f"{'-':4} {c['label']:36} FAILED: {c.get('failed', 'not measured').splitlines()[0]}")
        continue
    vs = "best" if c["label"] == r.get("best") else ratio(c.get("vs_best"))
    print(f"{c['rank']:<4} {c['label']:36} {iv(c['throughput_rps']):24} {vs:26} {iv(c['latency_p99_ms']):24} {100*c['error_rate']:6.2f}% {100*c['worker_imbalance']:9.0f}% {c['php_workers']:7}")
print("tuned ÷ default per server (throughput, paired by round, 95% CI) — bar: tuned ≥ default, or no significant difference:")
for s in r["servers"]:
    if s.get("failed"):
        print(f"  {s['server']:24} tune FAILED: {s['failed'].splitlines()[0]}")
        continue
    if not s.get("changes"):
        print(f"  {s['server']:24} tuned = default (no change measured better): bar met")
        continue
    t = s.get("tuned_vs_default")
    if not t or not t.get("ci_high"):
        print(f"  {s['server']:24} {ratio(t)}: undecided (too few rounds)")
        continue
    verdict = "better" if t["ci_low"] > 1 else ("WORSE: bar missed" if t["ci_high"] < 1 else "no significant difference")
    print(f"  {s['server']:24} {ratio(t)} {verdict}; changes: {', '.join(s['changes'])}")
for d in r.get("diagnoses") or []:
    print(f"  why: [{d['cause']}] {d['text']}")
for n in r.get("not_compared") or []:
    print(f"  not compared: {n['server']}: {n['reason']}")
EOF
}

app=${PAGE%%:*} wl=${PAGE#*:}
echo
echo "== 1. every server tuned, then interleaved: $app $wl, -c $CONNS"
args=(servers --app "$app" --workload "$wl" -c "$CONNS" --time-budget "$BUDGET" --rounds "$ROUNDS" -d "$DUR" --warmup "$CWARM"
	--trial-duration "$TRIAL" --trial-warmup "$WARM" -o "$OUT/servers-$app-$wl" --json)
[[ -n $SERVERS ]] && args+=(--servers "$SERVERS")
if "$BIN" "${args[@]}" >"$OUT/servers-$app-$wl.json" 2>"$OUT/servers-$app-$wl.log"; then
	summarize "$OUT/servers-$app-$wl.json"
else
	echo "phptune servers failed (exit $?): see $OUT/servers-$app-$wl.log"
	tail -3 "$OUT/servers-$app-$wl.log"
	[[ -s $OUT/servers-$app-$wl.json ]] && summarize "$OUT/servers-$app-$wl.json"
fi
echo "report: $OUT/servers-$app-$wl/report.html"

echo
echo "== 2. seed 002: NGINX Unit with 20 processes against php-fpm static 10"
if [[ $SKIP_SEED == 1 ]]; then
	echo "SKIPPED: SKIP_SEED=1"
	exit 0
fi
if ! "$BIN" knobs 2>/dev/null | grep -q 'unit\.processes'; then
	echo "SKIPPED: this phptune has no server=unit (no unit.processes knob)"
	exit 0
fi
printf 'server=unit\nunit.pm=static\nunit.processes=20\n' >"$OUT/unit-20.knobs"
printf 'server=nginx-fpm\npm=static\npm.max_children=10\n' >"$OUT/fpm-static-10.knobs"
for page in $SEED_PAGES; do
	app=${page%%:*} wl=${page#*:}
	d=$OUT/seed002-$app-$wl
	echo "-- $app $wl, -c $CONNS: unit and nginx-fpm tuned and default, with unit-20 and fpm-static-10"
	set +e
	"$BIN" servers --app "$app" --workload "$wl" --servers unit,nginx-fpm -c "$CONNS" --time-budget "$SEED_BUDGET" --rounds "$ROUNDS" \
		-d "$DUR" --warmup "$CWARM" --trial-duration "$TRIAL" --trial-warmup "$WARM" \
		--add unit-20="$OUT/unit-20.knobs" --add fpm-static-10="$OUT/fpm-static-10.knobs" -o "$d" --json >"$d.json" 2>"$d.log"
	rc=$?
	set -e
	if [[ $rc == 2 ]]; then
		echo "SKIPPED: phptune refused the run (e.g. Unit cannot run here):"
		grep -v '^servers: ' "$d.log" | head -6 | sed 's/^/  /'
		continue
	fi
	[[ $rc == 0 ]] || echo "phptune servers failed (exit $rc): see $d.log"
	[[ -s $d.json ]] || continue
	summarize "$d.json"
	python3 - "$d.json" <<'EOF'
import json, math, statistics, sys
r = json.load(open(sys.argv[1]))
c = {x["label"]: x for x in r["configs"]}
# Student t 0.975 quantiles by degrees of freedom.
T = {1: 12.71, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
def paired(a, b):
    xa, xb = c.get(a, {}).get("throughput_rps_by_round") or [], c.get(b, {}).get("throughput_rps_by_round") or []
    if len(xa) != r["rounds_run"] or len(xb) != r["rounds_run"] or len(xa) < 2:
        return f"{a} ÷ {b}: not measured in every round: no paired ratio"
    logs = [math.log(y / x) for x, y in zip(xb, xa) if x > 0 and y > 0]
    m, sd = statistics.mean(logs), statistics.stdev(logs)
    h = T.get(len(logs) - 1, 2.0) * sd / math.sqrt(len(logs))
    return f"{a} ÷ {b} throughput: {math.exp(m):.2f}× [{math.exp(m-h):.2f}, {math.exp(m+h):.2f}] over {len(logs)} rounds (seed 002: 108 ÷ 201 rps = 0.54×)"
print(paired("unit-20", "fpm-static-10"))
print(paired("unit tuned", "nginx-fpm tuned"))
for label in ("unit-20", "fpm-static-10", "unit default", "unit tuned", "nginx-fpm tuned"):
    x = c.get(label)
    if not x or not x.get("rank"):
        continue
    w = x.get("worker_cpu_pct") or []
    even = 100 / x["php_workers"] if x["php_workers"] else 0
    print(f"{label:16} busiest worker {100*x['worker_imbalance']:.0f}% of the pool's CPU (even {even:.0f}%), PHP CPU {x['cpu_php_ms_per_request']:.2f} ms/req, "
          f"PSS/worker {x['worker_pss_bytes']/2**20:.1f} MiB; per-worker CPU % of a core: {', '.join(f'{v:.0f}' for v in w[:20])}")
EOF
	echo "report: $d/report.html"
done
