# What the benchmark scripts share; each sources it after cd-ing to the
# repository's root. BIN is set by the script (or by bench_start).

# bench_build SCRIPT: python3, which does the scripts' arithmetic, is
# installed (or SCRIPT stops saying how to install it), and BIN is built.
bench_build() {
	command -v python3 >/dev/null || { echo "$1 needs python3 for the arithmetic: apt-get install python3" >&2; exit 1; }
	go build -o "$BIN" ./cmd/phptune
}

# bench_start NAME: what bench/NAME.sh does first: BIN built (bench_build),
# a home of its own (bench_home), and OUT, bench/out/NAME-DATE unless set,
# made.
bench_start() {
	OUT=${OUT:-bench/out/$1-$(date +%Y%m%d-%H%M%S)}
	BIN=bin/phptune
	bench_build "bench/$1.sh"
	bench_home
	mkdir -p "$OUT"
}

# bench_home: a PHPTUNE_HOME of the run's own unless one is set, readable
# by the accounts the labs run as.
bench_home() {
	if [[ -z "${PHPTUNE_HOME:-}" ]]; then
		PHPTUNE_HOME=$(mktemp -d /tmp/phptune-bench-XXXX)
		chmod 755 "$PHPTUNE_HOME"
		export PHPTUNE_HOME
	fi
}
