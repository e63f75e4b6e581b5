#!/usr/bin/env bash
# bench/build.sh — the distro's php-fpm against phptune's builds of the same PHP,
# side by side in one run:
#
#   distro    Debian's php8.2-fpm as installed
#   plain     `phptune build --variant plain` (Debian's flags and extensions, rebuilt here)
#   pgo       `phptune build --variant pgo --train $TRAIN` (make prof-gen, the
#             instrumented php-fpm serving a WordPress lab under phptune's FastCGI
#             generator, prof-use)
#   bolt      `phptune build --variant bolt --train $TRAIN` (plain linked with its
#             relocations, php-fpm rewritten by LLVM BOLT from an instrumented run)
#   pgo-bolt  both
#   pgo-lto   pgo with gcc's link-time optimisation
#   V+fast    variant V built with `--cflags "$FAST_CFLAGS"` on top of Debian's flags
#             (default: -fno-semantic-interposition -fno-stack-protector
#             -U_FORTIFY_SOURCE, i.e. without Debian's stack and buffer hardening)
#   V+o3      V built with `--cflags "$O3_CFLAGS"` (default: -O3 -march=native and
#             FAST_CFLAGS); any V+NAME takes its flags from ${NAME^^}_CFLAGS
#
# Measured by `phptune compare` (interleaved rounds, each in fresh processes, same
# pool) with the knob php.build, on the page the builds were trained on (WordPress
# front) and on two they were not (WordPress comment POSTs, the strings app). The
# statistic is the php-fpm workers' CPU milliseconds per request from the observer,
# which CPU steal does not move, shown raw and at the machine's speed (each run's
# CPU per request ÷ its machine-speed probe reading: a neighbour that slows the CPU
# moves the raw figure, less so this one), beside throughput. Printed: distro/plain
# (the rebuild itself: other patch level, other flags), plain/pgo (PGO alone),
# plain/bolt (BOLT alone), pgo/pgo-bolt (BOLT on top of PGO), V/V+NAME (the added
# flags alone), V+fast/V+NAME (NAME's flags beyond +fast's) and distro/each, each
# the geometric mean of the per-round paired ratios with a 95% t interval (> 1: the
# second is faster), and the wall time of every build step.
#
# TUNE=1 then measures everything together: `phptune tune --app wordpress` with the
# build that was fastest on the training page (or TUNE_BUILD, a variant) as one more
# challenge beside the default ones (the JIT, opcache's timestamps, the process
# manager, listen, max_requests) and the pool's sizing; its holdout (recommended
# against the distro default, interleaved) is printed with each decision's own
# ratio, i.e. the share each had in the race.
#
# Not run by any test: a full build takes ~15 minutes of 2 cores here (a trained
# one ~25-40), each page's compare ~10 minutes, the tune TUNE_BUDGET (30m).
#
# Usage: bash bench/build.sh
# Settings (environment): VARIANTS ("plain pgo"; add bolt, pgo-bolt, pgo-lto, V+fast...),
# FAST_CFLAGS, O3_CFLAGS (above),
# TRAIN (wordpress:front), CONNS (8), ROUNDS (5), TRIAL/WARM (20s/5s), JOBS (2),
# PAGES ("wordpress:front wordpress:comment strings:front"), OUT (bench/out/build-DATE),
# TUNE (0), TUNE_BUILD (the fastest variant on TRAIN), TUNE_BUDGET (30m), TUNE_CONNS (20).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

VARIANTS=${VARIANTS:-plain pgo}
FAST_CFLAGS=${FAST_CFLAGS:--fno-semantic-interposition -fno-stack-protector -U_FORTIFY_SOURCE}
O3_CFLAGS=${O3_CFLAGS:--O3 -march=native $FAST_CFLAGS}
TRAIN=${TRAIN:-wordpress:front}
CONNS=${CONNS:-8}
PAGES=${PAGES:-wordpress:front wordpress:comment strings:front}
ROUNDS=${ROUNDS:-5}
TRIAL=${TRIAL:-20s}
WARM=${WARM:-5s}
JOBS=${JOBS:-2}
OUT=${OUT:-bench/out/build-$(date +%Y%m%d-%H%M%S)}
TUNE=${TUNE:-0}
TUNE_BUILD=${TUNE_BUILD:-}
TUNE_BUDGET=${TUNE_BUDGET:-30m}
TUNE_CONNS=${TUNE_CONNS:-20}
BIN=bin/phptune

bench_build bench/build.sh
mkdir -p "$OUT"
echo "bench/build.sh: $(date -u +%FT%TZ), $(nproc) cores, train $TRAIN, -c $CONNS, $ROUNDS rounds of $TRIAL+$WARM, out $OUT"

# Builds run at nice 19 / SCHED_IDLE (phptune does that itself); an existing
# build of the same request is reused at once.
for v in $VARIANTS; do
	base=${v%%+*} flags=()
	if [ "$base" != "$v" ]; then
		name=${v#*+}
		[[ $name =~ ^[a-z][a-z0-9_]*$ ]] || { echo "variant $v: +$name must be a lower-case word (its flags come from \${NAME^^}_CFLAGS)" >&2; exit 1; }
		var=${name^^}_CFLAGS
		[ -n "${!var:-}" ] || { echo "variant $v: set $var to the flags of +$name" >&2; exit 1; }
		flags=(--cflags "${!var}")
	fi
	train=(--train "$TRAIN")
	[ "$base" = plain ] && train=()
	"$BIN" build --variant "$base" "${train[@]}" "${flags[@]}" --jobs "$JOBS" --json >"$OUT/$v.json" 2>"$OUT/$v.log" ||
		{ echo "build $v failed: see $OUT/$v.log" >&2; tail -3 "$OUT/$v.log" >&2; exit 1; }
done
for v in $VARIANTS; do
	python3 - "$OUT/$v.json" "$OUT/$v.knobs" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
note = ""
if r.get("older_than_installed"):
    note = f"# WARNING: PHP {r['source_version']} is OLDER than the installed {r['installed_version']} (missing security fixes)\n"
extra = f" +{r['extra_cflags']}" if r.get("extra_cflags") else ""
open(sys.argv[2], "w").write(f"# phptune build {r['id']}: PHP {r['source_version']} {r['variant']}{extra} {r.get('training','')}\n{note}php.build={r['id']}\n")
steps = ", ".join(f"{s['name']} {s['seconds']:.0f}s" for s in r["steps"])
print(f"{r['variant']}{extra}: build {r['id']}, PHP {r['source_version']}, steps: {steps}")
if note:
    print(note.strip())
EOF
done

for page in $PAGES; do
	app=${page%%:*} wl=${page#*:}
	echo
	echo "== $app $wl$( [ "$page" = "$TRAIN" ] && echo ' (trained on)' || echo ' (not trained on)')"
	arms=(distro=default)
	for v in $VARIANTS; do arms+=("$v=$OUT/$v.knobs"); done
	"$BIN" compare --app "$app" --workload "$wl" -c "$CONNS" --rounds "$ROUNDS" -d "$TRIAL" --warmup "$WARM" --json \
		"${arms[@]}" >"$OUT/compare-$app-$wl.json" 2>"$OUT/compare-$app-$wl.log" ||
		{ echo "compare failed: see $OUT/compare-$app-$wl.log" >&2; continue; }
	best=/dev/null
	[ "$page" = "$TRAIN" ] && best=$OUT/best-variant
	python3 - "$OUT/compare-$app-$wl.json" "$best" <<'EOF'
import json, math, statistics, sys
c = json.load(open(sys.argv[1]))
speed = {}
cpu, probe = {}, {}
for cfg in c["configs"]:
    if cfg.get("failed"):
        print(f"{cfg['label']}: FAILED: {cfg['failed']}")
        continue
    cpu[cfg["label"]] = [x * 1000 for x in cfg["php_cpu_s_per_request_by_round"]]
    probe[cfg["label"]] = cfg.get("speed_probe_ms_by_round") or [0] * len(cpu[cfg["label"]])
for label, xs in cpu.items():
    print(f"{label:8s} php-fpm CPU ms/request: median {statistics.median(xs):.3f} (rounds {', '.join(f'{x:.3f}' for x in xs)}); speed probe ms {', '.join(f'{x:.3f}' for x in probe[label])}")
# Student t 0.975 quantiles by degrees of freedom.
T = {1: 12.71, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
def interval(logs):
    m, sd = statistics.mean(logs), statistics.stdev(logs)
    h = T.get(len(logs) - 1, 2.0) * sd / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)
def ratio(a, b, what):
    if a not in cpu or b not in cpu:
        return
    # Paired by round: the same round ran both back to back.
    pairs = [(x, y, px, py) for x, y, px, py in zip(cpu[a], cpu[b], probe[a], probe[b]) if x > 0 and y > 0]
    if len(pairs) < 2:
        return
    r, lo, hi = interval([math.log(x / y) for x, y, _, _ in pairs])
    line = f"{a}/{b} speed ({what}; CPU ms per request {a} / {b}): {r:.3f} [{lo:.3f}, {hi:.3f}]"
    at = [math.log((x / px) / (y / py)) for x, y, px, py in pairs if px > 0 and py > 0]
    if len(at) == len(pairs):
        sr, slo, shi = interval(at)
        line += f"; at the machine's speed {sr:.3f} [{slo:.3f}, {shi:.3f}]"
        r, hi = sr, shi
    print(line + f" over {len(pairs)} rounds")
    if a == "distro":
        speed[b] = r
    if r < 0.97:
        sig = "significant: the interval is below 1" if hi < 1 else "the interval includes 1"
        print(f"WARNING: {b} costs {100 * (1 / r - 1):.1f}% more CPU per request than {a} on this page ({sig})")
labels = list(cpu)
ratio("distro", "plain", "the rebuild itself")
ratio("plain", "pgo", "PGO alone")
ratio("plain", "bolt", "BOLT alone")
ratio("pgo", "pgo-bolt", "BOLT on top of PGO")
ratio("pgo", "pgo-lto", "LTO on top of PGO")
for v in labels:
    if "+" in v:
        base, name = v.split("+", 1)
        ratio(base, v, "the added flags alone")
        if name != "fast":
            ratio(base + "+fast", v, f"+{name}'s flags beyond +fast's")
for v in labels:
    if v not in ("distro", "plain"):
        ratio("distro", v, "all of it")
for row in c["summary"]:
    print(f"{row['label']:8s} throughput {row['throughput_rps_median']:.1f} rps, ratio to distro {row['throughput_ratio']:.3f} [{row['throughput_ratio_ci_low']:.3f}, {row['throughput_ratio_ci_high']:.3f}]")
if speed:
    open(sys.argv[2], "w").write(max(speed, key=speed.get) + "\n")
EOF
done

[[ $TUNE == 1 ]] || exit 0
v=${TUNE_BUILD:-$(cat "$OUT/best-variant" 2>/dev/null || true)}
[ -n "$v" ] && [ -f "$OUT/$v.json" ] || { echo "TUNE=1: no build to challenge with (set TUNE_BUILD to one of: $VARIANTS)" >&2; exit 1; }
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$OUT/$v.json")
echo
echo "== everything together: tune --app wordpress, the $v build ($id) one more challenge, budget $TUNE_BUDGET"
chal=()
for c in pm=dynamic pm=ondemand listen=tcp opcache.validate_timestamps=off jit=tracing,64M pm.max_requests=1000 "php.build=$id"; do
	chal+=(--challenges "$c")
done
t0=$(date +%s)
"$BIN" tune --app wordpress --workload front -c "$TUNE_CONNS" --memory-budget 1G --time-budget "$TUNE_BUDGET" --curve none \
	"${chal[@]}" -o "$OUT/tune" >"$OUT/tune.txt" 2>"$OUT/tune.log" ||
	{ echo "tune failed: see $OUT/tune.log" >&2; tail -5 "$OUT/tune.log" >&2; exit 1; }
echo "tune wall time $(($(date +%s) - t0)) s; its evidence: $OUT/tune/evidence.txt"
# The decisions (each challenger's own ratio against the sized pool: its share) and
# the holdout against the distro default.
sed -n '/^paired comparisons/,/^$/p;/^holdout/,/^$/p' "$OUT/tune/evidence.txt"
