#!/usr/bin/env bash
# bench/chaos.sh — issue 16's chaos suite, run RUNS times: applies to a real php-fpm master
# (Debian's layout in a temporary directory) that go wrong every way the suite knows — a value
# php-fpm -t refuses, a reload that kills the master, the master restarted mid-apply, the pool
# removed, a full disk, 20 applies killed (SIGKILL) or interrupted (Ctrl-C) at random moments —
# and counts the broken hosts (a file not byte-identical, or the pool not serving its old
# configuration). Prints the count of each run and the total. Needs root (the masters run as
# root, the full disk is a tmpfs).
#
# Usage: RUNS=5 bash bench/chaos.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
total=0
failed=0
for i in $(seq 1 "$RUNS"); do
	out=$(go test -count=1 -v -run 'TestChaos$' ./internal/live/livehost/ 2>&1) || failed=$((failed + 1))
	n=$(printf '%s\n' "$out" | sed -n 's/^livehost chaos: \([0-9]*\) broken hosts$/\1/p' | tail -1)
	if [[ -z $n ]]; then
		echo "run $i: the suite did not report (see go test's output below)"
		printf '%s\n' "$out" | tail -30
		failed=$((failed + 1))
		continue
	fi
	echo "run $i: $n broken hosts"
	total=$((total + n))
done
echo "chaos: $total broken hosts in $RUNS runs ($failed runs failed)"
