# What the benchmark scripts share; each sources it after cd-ing to the
# repository's root. BIN is set by the script.

# bench_build SCRIPT: python3, which does the scripts' arithmetic, is
# installed (or SCRIPT stops saying how to install it), and BIN is built.
bench_build() {
	command -v python3 >/dev/null || { echo "$1 needs python3 for the arithmetic: apt-get install python3" >&2; exit 1; }
	go build -o "$BIN" ./cmd/phptune
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
