#!/usr/bin/env bash
# PHP 8.4 on the simulated production server: test/realserver.sh runs in a
# namespace without a network, so Debian 13's PHP root is made first
# (phptune php add 8.4, ~1 min) in a home of this run's own, then
# TestSitePHP84OnProductionServer measures the production site on the
# distro's PHP and on that root inside the server's namespaces. The root
# and the home are removed at the end. Part of make test-build.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BIN=${BIN:-bin/phptune}
home=$(mktemp -d /var/lib/phptune-php84-XXXXXX)
chmod 755 "$home"
# A go test cut off by its timeout skips its cleanups: its labs are taken
# down here, before the root and the home go.
trap 'PHPTUNE_HOME=$home "$BIN" lab down --all >/dev/null 2>&1 || true
	PHPTUNE_HOME=$home "$BIN" php remove 8.4 >/dev/null 2>&1 || true
	rm -rf --one-file-system "$home"' EXIT
PHPTUNE_HOME=$home "$BIN" php add 8.4
PHPTUNE_PHP_ROOT_HOME=$home bash test/realserver.sh "$GO" test -count=1 -timeout 20m -p 1 -v -run 'TestSitePHP84OnProductionServer' ./internal/cli/
