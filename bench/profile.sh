#!/usr/bin/env bash
# bench/profile.sh — issue 15's bars on this machine (seed 004: look before changing).
#
# Two parts, each a function (run one by naming it):
#
# wordpress: `phptune profile --app wordpress` ($ROUNDS rounds, each plain, perf and
#   excimer once, interleaved, -c $CONNS -d $DURATION). It prints and checks:
#   - "other" holds <= 10% of the native samples of the stack;
#   - the top PHP functions name WordPress functions (WP_Hook::apply_filters);
#   - each sampler's overhead, CPU per request (the stack's, perf's own included)
#     with / without over the same rounds: point <= 1.05 and upper bound <= 1.10.
#
# tune: `phptune tune --app wordpress --profile` and the same tune without, same
#   budget: the challenges the profile added (the plain tune does not try them) and the
#   decisions the search made on them (adopted or not, with their intervals).
#
# Usage: bash bench/profile.sh [wordpress] [tune]
# Settings (environment): ROUNDS (5), CONNS (8), DURATION (10s), BUDGET (12m: each
# tune's), TUNE_CONNS (8), OUT (bench/out/profile-DATE), PHPTUNE_HOME (a fresh one in
# /tmp when unset).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
CONNS=${CONNS:-8}
DURATION=${DURATION:-10s}
BUDGET=${BUDGET:-12m}
TUNE_CONNS=${TUNE_CONNS:-8}
OUT=${OUT:-bench/out/profile-$(date +%Y%m%d-%H%M%S)}
BIN=bin/phptune
if [ -z "${PHPTUNE_HOME:-}" ]; then
	export PHPTUNE_HOME=$(mktemp -d /tmp/phptune-bench-XXXXXX)
fi
mkdir -p "$OUT"
make -s build

wordpress() {
	echo "== profile of WordPress: $ROUNDS rounds of plain, perf and excimer, -c $CONNS -d $DURATION"
	$BIN profile --app wordpress --rounds "$ROUNDS" -c "$CONNS" -d "$DURATION" -o "$OUT/wordpress" | tee "$OUT/wordpress.txt"
	python3 - "$OUT/wordpress/profile.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ok = True
n = r.get("native") or {}
total = n.get("samples", 0)
other = n.get("components", {}).get("other", 0)
if total:
    share = other / total
    print(f"bar: other {100*share:.1f}% of {total} native samples (<= 10%): {'ok' if share <= 0.10 else 'MISSED'}")
    ok &= share <= 0.10
else:
    print("bar: no native samples:", r.get("native_unavailable")); ok = False
p = r.get("php") or {}
top = sorted(p.get("inclusive", {}).items(), key=lambda kv: -kv[1])[:10]
names = [k for k, _ in top]
wp = any(k.startswith("WP_") or k in ("apply_filters", "do_action", "get_option") for k in names)
print(f"bar: top PHP functions (inclusive) {names[:6]}: {'ok' if wp else 'MISSED'}")
ok &= wp
for o in r.get("overhead", []):
    pt, hi = o["cpu_per_request_ratio"], o["cpu_per_request_ratio_high"]
    good = pt <= 1.05 and 0 < hi <= 1.10
    print(f"bar: {o['sampler']} overhead x{pt:.3f} [{o['cpu_per_request_ratio_low']:.3f}, {hi:.3f}] over {o['rounds']} rounds (point <= 1.05, upper <= 1.10): {'ok' if good else 'MISSED'}")
    ok &= good
print("findings:", [f["id"] for f in r.get("findings", [])])
sys.exit(0 if ok else 1)
EOF
}

tune() {
	echo "== tune of WordPress with --profile and without, $BUDGET each"
	$BIN tune --app wordpress -c "$TUNE_CONNS" --time-budget "$BUDGET" --profile -o "$OUT/tune-profile" > "$OUT/tune-profile.txt"
	$BIN tune --app wordpress -c "$TUNE_CONNS" --time-budget "$BUDGET" -o "$OUT/tune-plain" > "$OUT/tune-plain.txt"
	python3 - "$OUT/tune-profile/result.json" "$OUT/tune-plain/result.json" <<'EOF'
import json, sys
withp, plain = (json.load(open(f)) for f in sys.argv[1:3])
tried = lambda r: {d["name"] for d in r.get("decisions", [])}
added = sorted(tried(withp) - tried(plain))
for f in withp.get("profile_findings", []):
    print(f"finding: {f['evidence']} -> {f.get('challenges')}")
print("challenges only the profiled tune tried:", added)
for d in withp.get("decisions", []):
    if d["name"] in added:
        verdict = "adopted" if d.get("adopted") else "kept the incumbent"
        print(f"  {d['name']}: x{d.get('score_ratio', 0):.2f} [{d.get('ci_low', 0):.2f}, {d.get('ci_high', 0):.2f}] after {d.get('rounds')} rounds: {d.get('verdict')}, {verdict}")
print("holdout (profiled):", json.dumps(withp.get("holdout", {}).get("summary", withp.get("holdout")))[:400])
sys.exit(0 if added else 1)
EOF
}

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(wordpress tune)
for p in "${parts[@]}"; do "$p"; done
echo "results in $OUT"
