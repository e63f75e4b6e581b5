# phptune — see README.md. `make demo` and `make test` do all the set-up on a
# fresh Debian 12 machine (as root they apt-get what is missing).
GO ?= go
BIN := bin/phptune
export GOFLAGS := -buildvcs=false
# The pure core (no I/O) runs again under the race detector.
CORE_PKGS := $(addprefix ./internal/,$(addsuffix /...,base/unidiff model/knob model/phpini model/results model/stats decide/search decide/tune live/recommend decide/capacity stack/servercompare live/advise watch/profile watch/flamegraph))

.PHONY: all build setup demo test test-short test-realserver test-build vet fuzz golden bench bench-tune bench-build clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/phptune

# Installs the Debian packages the lab and the tests need (nginx, php-fpm,
# MariaDB, WordPress, wrk, ab, Chromium for the report's browser test,
# ansible-core for the exported role's test, Locust in its own venv for
# bench --engine locust).
setup: build
	$(BIN) setup --with-test-tools --with-ansible --with-locust

# DEMO_FLAGS are more flags for phptune demo (the README test shortens its
# time budget with them: internal/testkit/readmecmd).
demo: build
	$(BIN) setup
	$(BIN) demo $(DEMO_FLAGS)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

# The whole suite: unit tests (pure core under -race), fuzz seeds, and the
# integration tests that start real nginx, php-fpm and MariaDB.
# reaptestlabs first takes down the labs a killed test left running.
test: setup vet
	$(GO) run ./internal/tools/reaptestlabs
	$(GO) test -race -count=1 $(CORE_PKGS)
	$(GO) test -count=1 -timeout 40m -p 1 ./...

# The packages that read or change a live host, again on a simulated
# production server (nginx on :80 with a vhost of its own, Debian's Apache
# on :8080 with another, php-fpm, MariaDB on the default socket) in private
# namespaces: test/realserver.sh. Of the
# command line's tests, those of the live-host commands and the site labs;
# then, with the script's Apache as prefork + mod_php instead of the event
# MPM + proxy_fcgi (Debian's Apache runs one MPM at a time), its mod_php
# tests.
REALSERVER_PKGS := ./internal/live/livehost/... ./internal/live/liveapply/... ./internal/sitecopy/site/... ./internal/live/ansible/... ./internal/sitecopy/dbcopy/...
REALSERVER_CLI := Apply|Advise|Rollback|HostFlags|CheckHost|Site|Golden|Export
test-realserver: setup
	$(GO) run ./internal/tools/reaptestlabs
	bash test/realserver.sh $(GO) test -count=1 -timeout 40m -p 1 $(REALSERVER_PKGS)
	bash test/realserver.sh $(GO) test -count=1 -timeout 40m -p 1 -run '$(REALSERVER_CLI)' ./internal/cli/
	PHPTUNE_REALSERVER_APACHE=modphp bash test/realserver.sh $(GO) test -count=1 -timeout 40m -p 1 -run 'ModPHP' ./internal/cli/

# The unit tests alone: no server is started (-short skips every test that
# would start nginx, php-fpm, MariaDB or a lab). Minutes, not tens of them.
test-short: vet
	$(GO) test -short -count=1 ./...

# The PHP build pipeline on a minimal configure (plain, then pgo: three
# compiles: ~20 min on a quiet 2-core machine, ~40 under load; docs/build.md). Its own CI step: it would
# push make test past its 40-minute budget. Every compile runs at nice 19.
# First, a PHP root of Debian 13's php8.4-fpm made from an empty cache
# (mmdebstrap from the configured Debian archive, ~1-2 min; docs/build.md),
# in a lab, a compare and a tune; then the production server's site on it
# (test/php84-site.sh).
test-build: build
	$(BIN) build deps
	PHPTUNE_BUILD_TESTS=1 $(GO) test -count=1 -timeout 20m -p 1 -v -run 'TestMakeRoot' ./internal/build/phproot/
	PHPTUNE_BUILD_TESTS=1 $(GO) test -count=1 -timeout 20m -p 1 -v -run 'TestPHPRootLab' ./internal/cli/
	PHPTUNE_BUILD_TESTS=1 $(GO) test -count=1 -timeout 20m -p 1 -v -run 'TestPHPRootCompat' ./internal/cli/
	GO=$(GO) BIN=$(BIN) bash test/php84-site.sh
	PHPTUNE_BUILD_TESTS=1 $(GO) test -count=1 -timeout 60m -p 1 -v -run 'TestMinimalBuild|TestPGOMinimalBuild' ./internal/build/phpbuild/

# Short fuzzing of every parser, FUZZTIME each (not part of make test;
# .ci/run's fast tier runs it with FUZZTIME=20000x: a count of inputs, as a
# timed run of a few seconds can end in "context deadline exceeded").
FUZZTIME ?= 20s
fuzz:
	@for p in $$(grep -rl --include='*_test.go' '^func Fuzz' internal | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$p/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "== $$p $$f"; $(GO) test ./$$p -run=NONE -fuzz=^$$f$$ -fuzztime=$(FUZZTIME) || exit 1; done; done

# Rewrites every golden file (package goldentest's -update) from what the
# code prints now: review git diff after. -short starts no server; the
# golden apply --dry-run plan then runs on its own (php-fpm, as root).
golden:
	$(GO) test -short -count=1 $$(grep -rl --include='*_test.go' 'internal/testkit/goldentest"' internal | xargs -n1 dirname | sort -u | sed 's|^|./|') -update
	$(GO) test -count=1 ./internal/cli -run '^TestGoldenApplyDryRun$$' -update

bench: build
	bash bench/loadgen.sh

# The tuner against the grid, the calculator formula and the 2 x cores rule (hours;
# WORKLOADS="io hello" BUDGET=8m for a shorter run).
bench-tune: build
	bash bench/tune.sh

# distro vs plain vs pgo on the WordPress front page (hours of CPU).
bench-build: build
	bash bench/build.sh

clean:
	rm -rf bin
