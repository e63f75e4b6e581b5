#!/usr/bin/env bash
# bench/php84.sh — the distro's PHP 8.2 against Debian 13's own PHP 8.4 (a PHP
# root of `phptune php add 8.4`, run as php.build=debian-8.4), side by side in
# one run, each with and without the tracing JIT:
#
#   distro     Debian 12's php8.2-fpm as installed (opcache on, JIT off)
#   distro+jit the same with opcache.jit=tracing, opcache.jit_buffer_size=64M
#   php84      Debian 13's php8.4-fpm from the root (Debian 13's php.ini)
#   php84+jit  the same with the tracing JIT
#
# Measured by `phptune compare` (interleaved rounds, fresh processes, the same
# pool) on the WordPress front page and the strings app, at CONNS connections:
# its table gives each arm's median throughput and p99, the throughput ratio
# against distro and the PHP speed ratio (PHP CPU per request at the machine's
# speed), each with a 95% interval.
#
# TUNE=1 then measures everything phptune can decide together: `phptune tune
# --app wordpress` with php.build=debian-8.4 as one more challenge beside the
# default ones (JIT, opcache timestamps, pm, listen, max_requests) and the
# pool's sizing, against the distro default with tune's holdout (its verdict
# line is printed). PGO_BUILD=ID adds php.build=ID (a build of `phptune build
# --variant pgo-lto`, say, in the same PHPTUNE_HOME) as one more challenge.
#
# Not run by any test: the root takes ~1 minute (once; kept in the run's
# PHPTUNE_HOME), each compare ROUNDS x 4 x (TRIAL+WARM), the tune TUNE_BUDGET.
#
# Usage: bash bench/php84.sh
# Settings (environment): CONNS (20), ROUNDS (5), TRIAL (10s), WARM (3s),
# PAGES ("wordpress:front strings:front"; "" for none), TUNE (0), TUNE_BUDGET (30m),
# PGO_BUILD (none), OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

CONNS=${CONNS:-20}
ROUNDS=${ROUNDS:-5}
TRIAL=${TRIAL:-10s}
WARM=${WARM:-3s}
PAGES=${PAGES-wordpress:front strings:front}
TUNE=${TUNE:-0}
TUNE_BUDGET=${TUNE_BUDGET:-30m}
PGO_BUILD=${PGO_BUILD:-}
bench_start php84
echo "bench/php84.sh: $(date -u +%FT%TZ), $(nproc) cores, -c $CONNS, $ROUNDS rounds of $TRIAL+$WARM, home $PHPTUNE_HOME, out $OUT"

start=$(date +%s)
"$BIN" php add 8.4 >"$OUT/php-add.log" 2>&1 || { echo "php add 8.4 failed: see $OUT/php-add.log" >&2; tail -3 "$OUT/php-add.log" >&2; exit 1; }
echo "php add 8.4: $(( $(date +%s) - start )) s ($(grep -m1 -o 'PHP 8\.4\.[0-9]*' "$OUT/php-add.log" || echo 'PHP 8.4'))"

printf 'opcache.jit=tracing\nopcache.jit_buffer_size=64M\n' >"$OUT/jit.knobs"
printf 'php.build=debian-8.4\n' >"$OUT/php84.knobs"
printf 'php.build=debian-8.4\nopcache.jit=tracing\nopcache.jit_buffer_size=64M\n' >"$OUT/php84-jit.knobs"
for page in $PAGES; do
	app=${page%%:*} wl=${page#*:}
	echo
	echo "== $app $wl"
	"$BIN" compare --app "$app" --workload "$wl" -c "$CONNS" --rounds "$ROUNDS" -d "$TRIAL" --warmup "$WARM" \
		distro=default distro+jit="$OUT/jit.knobs" php84="$OUT/php84.knobs" php84+jit="$OUT/php84-jit.knobs" \
		>"$OUT/compare-$app-$wl.txt" 2>"$OUT/compare-$app-$wl.log" ||
		{ echo "compare failed: see $OUT/compare-$app-$wl.log" >&2; continue; }
	sed -n '/^config /,/^PHP speed ratio/p' "$OUT/compare-$app-$wl.txt"
done

if [ "$TUNE" = 1 ]; then
	echo
	builds=(--challenges 'php.build=debian-8.4')
	[ -n "$PGO_BUILD" ] && builds+=(--challenges "php.build=$PGO_BUILD")
	echo "== tune --app wordpress, everything together (${builds[*]}), budget $TUNE_BUDGET"
	"$BIN" tune --app wordpress -c "$CONNS" --time-budget "$TUNE_BUDGET" \
		--challenges 'pm=dynamic,pm=ondemand,listen=tcp,opcache.validate_timestamps=off,jit=tracing,64M,pm.max_requests=1000' \
		"${builds[@]}" -o "$OUT/tune" >"$OUT/tune.txt" 2>"$OUT/tune.log" ||
		{ echo "tune failed: see $OUT/tune.log" >&2; exit 1; }
	grep -E '^verdict|holdout|php.build|per 1000 requests' "$OUT/tune.txt" | head -24
fi
