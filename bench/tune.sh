#!/usr/bin/env bash
# bench/tune.sh — phptune's tuner against its yardsticks, each workload in one run:
#
#   tuned       what `phptune tune` recommends (domain strategy, time budget $BUDGET)
#   tuned-gridspace  the same, deciding only the grid's knobs (`--challenges grid`)
#   grid        the best point of the exhaustive grid pm × max_children × validate_timestamps
#               (`phptune tune --strategy grid`, no time budget)
#   calculator  the popular formula: max_children = 0.9 × MemAvailable / average worker RSS
#               (RSS measured under load at the distro default), dynamic pm, 25%/75% spares
#   2xcores     the "2 × cores" rule: a static pool of 2 × cores workers
#   default     the distro's configuration
#
# The five are then measured side by side by `phptune compare` (interleaved rounds, each
# in fresh processes) and the script prints ratios: tuned/default (throughput and p99),
# tuned/grid with the share of the grid's trials the tune used, tuned against the
# calculator and the 2×cores rule, the machine's PHP ceiling (cores ÷ php-fpm CPU-seconds
# per request, measured by the observer) and the tuned stack's share of it, and the wall
# time of each tune.
#
# The tunes run with --search-trials $SEARCH_TRIALS (14: 15% of the grid's 96 search
# trials), and tuned is also compared with the grid's pick head to head (a compare of
# the two alone, $GRID_ROUNDS interleaved rounds): the paired ratio and its 95% interval.
# Trial counts are search trials only (drift, holdout and curve trials left out, the
# grid's too).
#
# Usage: bash bench/tune.sh                       # every workload, the issue's settings (hours)
#        WORKLOADS="io hello" BUDGET=8m bash bench/tune.sh
# Settings (environment): WORKLOADS (app or app:workload), CONNS (50), BUDGET (15m),
# TRIAL/WARM (10s/3s, tune and compare), GRID_TRIAL/GRID_WARM (5s/2s), ROUNDS (3),
# SEARCH_TRIALS (14; 0: as the time budget allows), GRID_ROUNDS (10), SKIP_GRID=1,
# SKIP_GRIDSPACE=1, OUT (bench/out/tune-DATE).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

WORKLOADS=${WORKLOADS:-"hello phpinfo strings io wordpress:front wordpress:comment"}
CONNS=${CONNS:-50}
BUDGET=${BUDGET:-15m}
TRIAL=${TRIAL:-10s}
WARM=${WARM:-3s}
GRID_TRIAL=${GRID_TRIAL:-5s}
GRID_WARM=${GRID_WARM:-2s}
ROUNDS=${ROUNDS:-3}
SKIP_GRID=${SKIP_GRID:-0}
SKIP_GRIDSPACE=${SKIP_GRIDSPACE:-0}
SEARCH_TRIALS=${SEARCH_TRIALS:-14}
GRID_ROUNDS=${GRID_ROUNDS:-10}

bench_start tune
cores=$(nproc)
echo "bench/tune.sh: $(date -u +%FT%TZ), $cores cores, workloads: $WORKLOADS, -c $CONNS, budget $BUDGET, trials $TRIAL+$WARM, out $OUT"

for w in $WORKLOADS; do
	app=${w%%:*}
	wl=front
	[[ $w == *:* ]] && wl=${w#*:}
	d=$OUT/$app-$wl
	mkdir -p "$d"
	echo "== $app $wl"

	t0=$(date +%s)
	"$BIN" tune --app "$app" --workload "$wl" -c "$CONNS" --time-budget "$BUDGET" \
		--search-trials "$SEARCH_TRIALS" --trial-duration "$TRIAL" --trial-warmup "$WARM" --memory-budget none -o "$d/tune" >"$d/tune.txt" 2>"$d/tune.log" ||
		{ echo "tune failed, see $d/tune.log" >&2; tail -5 "$d/tune.log" >&2; continue; }
	echo $(($(date +%s) - t0)) >"$d/tune.wall"

	configs=(default=default "tuned=$d/tune/recommended.knobs")
	if [[ $SKIP_GRID != 1 ]]; then
		# The same tune restricted to the grid's own space (pm, max_children,
		# validate_timestamps): the like-for-like count of trials.
		if [[ $SKIP_GRIDSPACE != 1 ]] && "$BIN" tune --app "$app" --workload "$wl" -c "$CONNS" --time-budget "$BUDGET" --challenges grid --curve none \
			--search-trials "$SEARCH_TRIALS" --trial-duration "$TRIAL" --trial-warmup "$WARM" --memory-budget none -o "$d/tune-gridspace" >"$d/tune-gridspace.txt" 2>"$d/tune-gridspace.log"; then
			configs+=("tuned-gridspace=$d/tune-gridspace/recommended.knobs")
		fi
		t0=$(date +%s)
		if "$BIN" tune --app "$app" --workload "$wl" -c "$CONNS" --strategy grid --time-budget 0 --curve none \
			--trial-duration "$GRID_TRIAL" --trial-warmup "$GRID_WARM" --memory-budget none -o "$d/grid" >"$d/grid.txt" 2>"$d/grid.log"; then
			echo $(($(date +%s) - t0)) >"$d/grid.wall"
			configs+=("grid=$d/grid/recommended.knobs")
		else
			echo "grid failed, see $d/grid.log" >&2
		fi
	fi

	# The calculator's and the 2×cores rule's configurations, as the tune
	# built them from its own measurements of the distro default (its drift
	# trials): result.json's baselines, each with its rule and what it sets.
	python3 - "$d" <<'EOF'
import json, sys
d = sys.argv[1]
res = json.load(open(f"{d}/tune/result.json"))
for b in res.get("baselines") or []:
    if b["name"] in ("calculator", "2xcores") and b.get("settings"):
        open(f"{d}/{b['name']}.knobs", "w").write(f"# {b['rule']}\n" + "".join(s + "\n" for s in b["settings"]))
EOF
	for b in calculator 2xcores; do
		[[ -f $d/$b.knobs ]] && configs+=("$b=$d/$b.knobs")
	done

	"$BIN" compare --app "$app" --workload "$wl" -c "$CONNS" --rounds "$ROUNDS" -d "$TRIAL" --warmup "$WARM" --json \
		"${configs[@]}" >"$d/compare.json" 2>"$d/compare.log" || echo "compare reported failures, see $d/compare.log" >&2
	# The bar's comparison: tuned against the grid's pick alone, head to head.
	if [[ -f $d/grid/recommended.knobs ]]; then
		"$BIN" compare --app "$app" --workload "$wl" -c "$CONNS" --rounds "$GRID_ROUNDS" -d "$TRIAL" --warmup "$WARM" --json \
			"grid=$d/grid/recommended.knobs" "tuned=$d/tune/recommended.knobs" >"$d/compare-grid.json" 2>"$d/compare-grid.log" ||
			echo "compare with the grid reported failures, see $d/compare-grid.log" >&2
	fi
done

python3 - "$OUT" "$cores" <<'EOF'
import json, os, sys
out, cores = sys.argv[1], int(sys.argv[2])
def searched(path):
    # A tune's search trials: the drift, holdout (baselines included) and
    # curve trials, which both sides pay, left out.
    return sum(1 for t in json.load(open(path))["trials"] if t["phase"] not in ("drift", "holdout", "curve"))
def headtohead(p):
    # tuned ÷ grid from the two-configuration comparison: paired ratio, 95% CI.
    try:
        rows = {r["label"]: r for r in json.load(open(f"{p}/compare-grid.json"))["summary"]}
        r = rows["tuned"]
        line = f"{r['throughput_ratio']:.2f}x [{r['throughput_ratio_ci_low']:.2f},{r['throughput_ratio_ci_high']:.2f}]"
        if r.get("php_cpu_speed_ratio"):
            # PHP CPU per request at the machine's speed (each run's ÷ its
            # speed-probe reading), grid's ÷ tuned's: > 1 tuned is faster.
            line += f"; PHP speed {r['php_cpu_speed_ratio']:.2f}x [{r['php_cpu_speed_ratio_ci_low']:.2f},{r['php_cpu_speed_ratio_ci_high']:.2f}]"
        return line
    except Exception:
        return "-"
print()
print("workload           tuned/default  p99 ratio  tuned/grid  tuned/grid paired (throughput; PHP speed)  trials tune/grid  gridspace/grid  trials gridspace/grid  tuned/calc  tuned/2xcores  PHP ceiling rps  share  tune wall")
for d in sorted(os.listdir(out)):
    p = os.path.join(out, d)
    try:
        cmp = json.load(open(f"{p}/compare.json"))
    except Exception:
        print(f"{d:18s} (no comparison)")
        continue
    rows = {r["label"]: r for r in cmp["summary"]}
    cfgs = {c["label"]: c for c in cmp["configs"]}
    t = rows.get("tuned", {})
    def ratio(other):
        o = rows.get(other)
        if not o or not o["throughput_rps_median"] or not t.get("throughput_rps_median"):
            return "-"
        return f"{t['throughput_rps_median'] / o['throughput_rps_median']:.2f}x"
    def trials_of(run):
        # run's searched trials against the grid's, "-" when either is missing
        try:
            n, ng = searched(f"{p}/{run}/result.json"), searched(f"{p}/grid/result.json")
            return f"{n}/{ng} ({100*n/ng:.0f}%)"
        except Exception:
            return "-"
    trials = trials_of("tune")
    gs = "-"
    g, gsr = rows.get("grid"), rows.get("tuned-gridspace")
    if g and gsr and g["throughput_rps_median"]:
        gs = f"{gsr['throughput_rps_median'] / g['throughput_rps_median']:.2f}x"
    gst = trials_of("tune-gridspace")
    cpu = sorted(x for x in cfgs.get("tuned", {}).get("php_cpu_s_per_request_by_round", []) if x > 0)
    ceiling = cores / cpu[len(cpu)//2] if cpu else 0
    share = f"{100*t['throughput_rps_median']/ceiling:.0f}%" if ceiling and t.get("throughput_rps_median") else "-"
    p99 = f"{t['p99_ratio']:.2f}x" if t.get("p99_ratio") else "-"
    def ci(r):
        return f"{r['throughput_ratio']:.2f}x [{r['throughput_ratio_ci_low']:.2f},{r['throughput_ratio_ci_high']:.2f}]" if r.get("throughput_ratio") else "-"
    wall = open(f"{p}/tune.wall").read().strip() + " s" if os.path.exists(f"{p}/tune.wall") else "-"
    print(f"{d:18s} {ci(t):>22s} {p99:>9s} {ratio('grid'):>10s} {headtohead(p):>42s} {trials:>17s} {gs:>15s} {gst:>22s} {ratio('calculator'):>10s} {ratio('2xcores'):>13s} {ceiling:15.0f} {share:>6s} {wall:>9s}")
print()
print("tuned/default is the paired ratio from the interleaved comparison (95% CI); the others are ratios of medians.")
EOF
