GO ?= go
PKGS := ./...
# Execution counts, not durations: a -fuzztime duration races the fuzz
# coordinator in Go 1.26 and fails with "context deadline exceeded"
# (golang/go#75804).
FUZZTIME ?= 100000x
# Targets whose inputs are slow to run (a state file, a compiled kernel) take
# fewer.
FUZZSLOW ?= 20000x
# Targets whose every input is a synced state-file write or a whole HTML
# report (150 to 250 a second here) take fewer still.
FUZZIO ?= 5000x
# How long each new interesting input is minimized: Go's default is 60 s,
# which on a loaded machine can stall a smoke pass for a minute per input
# found; CI passes a count.
FUZZMIN ?= 60s

PREFIX ?= /usr
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2
QUASIM_CFLAGS := -std=c99 -Wall -Wextra -pedantic

.PHONY: python-check deb deb-check man all build test test-race test-race-short vet fmt fmt-check fuzz-smoke verify-unit bench-search bench-lookup cachegrind-check install uninstall libquasim install-c screenshots

all: fmt-check vet test

build:
	$(GO) build -o bin/ ./cmd/...

test:
	$(GO) test $(PKGS)

test-race:
	$(GO) test -race $(PKGS)

# The packages that start goroutines or use sync, in code or tests: CI's
# race pass. Each test binary instruments everything it links, so code that
# others call concurrently is covered by their tests.
RACE_RE := (^|[^a-zA-Z_.])go (func|[a-zA-Z_.]+[(])|"sync"|"sync/atomic"
RACE_PKGS = $(shell git grep -lE '$(RACE_RE)' -- '*.go' ':!:**/testdata/**' | xargs -n1 dirname | sort -u | sed 's|^|./|')

test-race-short:
	$(GO) test -race -short $(RACE_PKGS)

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -s -w $$(git ls-files '*.go')

fmt-check:
	@out=$$(gofmt -s -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt -s needed on:"; echo "$$out"; exit 1; fi

# One short coverage-guided pass per fuzz target: package, target, inputs,
# minimization of each new input. .ci/fuzz-smoke runs them as go test -fuzz
# would, linking each package's instrumented test binary once (go test
# links one per target). FuzzOpenDamaged has counts
# of its own: each input is a state file written, checked, then opened or
# salvaged (about 1,500 a second on a loaded 2-core machine, so 20,000 take
# about 15 s), and each input that finds new code would otherwise be
# minimized byte by byte for 60 s.
FUZZ_TARGETS = \
	./genome FuzzCompile $(FUZZTIME) $(FUZZMIN) \
	./genome FuzzEvalList $(FUZZTIME) $(FUZZMIN) \
	./genome FuzzParseT1 $(FUZZTIME) $(FUZZMIN) \
	./evaluate/replay FuzzParse $(FUZZTIME) $(FUZZMIN) \
	./internal/spec FuzzParse $(FUZZTIME) $(FUZZMIN) \
	./internal/spec FuzzParsePipeline $(FUZZTIME) $(FUZZMIN) \
	./internal/spec FuzzParseOpenCL $(FUZZSLOW) $(FUZZMIN) \
	./evaluate/opencl FuzzKernel $(FUZZSLOW) $(FUZZMIN) \
	./evaluate/opencl FuzzNPY $(FUZZTIME) $(FUZZMIN) \
	./internal/store FuzzDecode $(FUZZTIME) $(FUZZMIN) \
	./internal/store FuzzOpenDamaged $(FUZZSLOW) 200x \
	./cmd/quasimctl/cli FuzzParseTraceLine $(FUZZTIME) $(FUZZMIN) \
	./internal/strategies FuzzUnmarshal $(FUZZSLOW) $(FUZZMIN) \
	./evaluate/harness FuzzHello $(FUZZTIME) $(FUZZMIN) \
	./evaluate/harness FuzzResult $(FUZZTIME) $(FUZZMIN) \
	./evaluate/harness FuzzPipelineResult $(FUZZTIME) $(FUZZMIN) \
	./daemon FuzzObservations $(FUZZIO) $(FUZZMIN) \
	./daemon FuzzParseLookup $(FUZZSLOW) $(FUZZMIN) \
	./daemon FuzzPolicy $(FUZZTIME) $(FUZZMIN) \
	./daemon FuzzDecodeCursor $(FUZZTIME) $(FUZZMIN) \
	./daemon FuzzExperimentRequest $(FUZZTIME) $(FUZZMIN) \
	./introspect FuzzReadCPU $(FUZZTIME) $(FUZZMIN) \
	./introspect FuzzParseStat $(FUZZTIME) $(FUZZMIN) \
	./introspect FuzzParseCache $(FUZZTIME) $(FUZZMIN) \
	./introspect FuzzRecover $(FUZZSLOW) $(FUZZMIN) \
	./evaluate FuzzParseObjective $(FUZZTIME) $(FUZZMIN) \
	./internal/priors FuzzDecode $(FUZZTIME) $(FUZZMIN) \
	./precision FuzzRound $(FUZZTIME) $(FUZZMIN) \
	./precision FuzzStageRank $(FUZZTIME) $(FUZZMIN) \
	./precision FuzzParseStage $(FUZZTIME) $(FUZZMIN) \
	./certs FuzzDecode $(FUZZTIME) 2s \
	./certs FuzzVerifyBytes $(FUZZTIME) 2s \
	./certs FuzzParseJSON $(FUZZTIME) 2s \
	./memgraph FuzzDecode $(FUZZTIME) $(FUZZMIN) \
	./memgraph/tflite FuzzRead $(FUZZTIME) $(FUZZMIN) \
	./internal/memplan FuzzParseCache $(FUZZTIME) $(FUZZMIN) \
	./memgraph/onnx FuzzReadONNX $(FUZZTIME) $(FUZZMIN) \
	./memgraph/onnx FuzzShapeInference $(FUZZTIME) $(FUZZMIN) \
	./memgraph/onnx FuzzOpParams $(FUZZTIME) $(FUZZMIN) \
	./memgraph/onnx FuzzParseValue $(FUZZTIME) $(FUZZMIN) \
	./causal FuzzDecodeSpans $(FUZZTIME) $(FUZZMIN) \
	./causal FuzzImportChrome $(FUZZTIME) $(FUZZMIN) \
	./causal FuzzInferIterations $(FUZZTIME) $(FUZZMIN) \
	./report FuzzWrite $(FUZZIO) $(FUZZMIN) \
	./fleet FuzzApply $(FUZZTIME) $(FUZZMIN) \
	./client FuzzRetryAfter $(FUZZTIME) $(FUZZMIN)

# The Python package quasim: installed offline into a venv over Debian's
# numpy and PyOpenCL, as a user installs it, then its tests from outside the
# source tree (so they import the installed package), tuning through the
# quasimctl built here on this machine's OpenCL device, and a spec it
# exports served by the quasimd built here.
PYTHON ?= /usr/bin/python3
python-check:
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	$(GO) build -o $$tmp/ ./cmd/quasimctl ./cmd/quasimd && \
	$(PYTHON) -m venv --system-site-packages $$tmp/venv && \
	$$tmp/venv/bin/pip install -q --no-build-isolation --no-index ./runtime/python && \
	cd $$tmp && QUASIMCTL=$$tmp/quasimctl QUASIMD=$$tmp/quasimd venv/bin/python -m unittest discover -v -s $(CURDIR)/runtime/python/tests

fuzz-smoke:
	GO=$(GO) .ci/fuzz-smoke $(FUZZ_TARGETS)

# systemd-analyze verify of quasimd.service with the drop-in of
# docs/quasimd.service.d; ExecStart points at the built binary, since verify
# wants it to exist. Any warning (an unknown key, a bad value) fails.
verify-unit: build
	@d=$$(mktemp -d) && mkdir $$d/quasimd.service.d && \
	sed 's#^ExecStart=/usr/bin/quasimd#ExecStart=$(CURDIR)/bin/quasimd#' quasimd.service > $$d/quasimd.service && \
	cp docs/quasimd.service.d/*.conf $$d/quasimd.service.d/ && \
	out=$$(systemd-analyze verify $$d/quasimd.service 2>&1); rc=$$?; rm -rf $$d; \
	if [ $$rc -ne 0 ] || [ -n "$$out" ]; then echo "$$out"; echo "verify-unit: quasimd.service does not verify"; exit 1; fi

# The search-quality benchmark of docs/evidence/search-quality.md, on the shared real-GPU spaces.
bench-search: build
	./bin/quasimctl bench --space ../shared/spaces --strategy random,es,quantumsearch,schedules,portfolio --budget 400 --seeds 20 --peers ../shared/peers/kernel_tuner.json
	./bin/quasimctl bench --space ../shared/spaces --strategy portfolio --warm-from ../shared/spaces --budget 400 --seeds 20 --peers ../shared/peers/kernel_tuner.json

# memgraph's cache-miss estimate against valgrind's cachegrind (docs/kernel-authors/memgraph.md).
cachegrind-check:
	$(GO) test ./memgraph -run '^TestMissesAgainstCachegrind$$' -v

# A PNG of each view of the HTML report (quasimctl report), drawn by
# headless Chromium from the report package's test fixture, into SHOTS;
# REPORT=file.html draws that report's job JOB (default job-1) instead.
SHOTS ?= bin/screenshots
REPORT ?=
JOB ?= job-1
screenshots:
	$(GO) test ./report -count=1 -run '^TestScreenshots$$' -screenshots $(abspath $(SHOTS)) $(if $(REPORT),-report $(abspath $(REPORT))) -job $(JOB) -v

# Lookup latency of the socket API against a raw socket echo (docs/evidence/performance.md).
bench-lookup:
	$(GO) test ./daemon -run '^$$' -bench '^BenchmarkLookup$$' -benchtime 20000x
	$(GO) test ./daemon -run '^$$' -bench 'LookupJobs' -benchtime 2000x

# Installs the binaries, the systemd unit, the README and docs (the unit's
# Documentation=) and the privileges drop-in beside it, and creates the quasim user
# and group when they do not exist (run as root).
install: build
	install -D -m 0755 bin/quasimd $(DESTDIR)$(PREFIX)/bin/quasimd
	install -D -m 0755 bin/quasimctl $(DESTDIR)$(PREFIX)/bin/quasimctl
	install -D -m 0644 quasimd.service $(DESTDIR)/etc/systemd/system/quasimd.service
	install -d -m 0755 $(DESTDIR)/etc/quasim/kernels.d
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/quasim/README.md
	cd docs && find . -name "*.md" -o -name "*.png" | while read f; do install -D -m 0644 "$$f" "$(DESTDIR)$(PREFIX)/share/doc/quasim/docs/$$f"; done
	install -D -m 0644 docs/quasimd.service.d/devices.conf $(DESTDIR)$(PREFIX)/share/doc/quasim/quasimd.service.d/devices.conf
	@if [ -z "$(DESTDIR)" ] && ! getent passwd quasim >/dev/null; then \
		useradd --system --user-group --home-dir /var/lib/quasim --shell /usr/sbin/nologin quasim; fi
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null; then systemctl daemon-reload || true; fi

# The Debian package, built with dpkg-deb into bin/ (packaging/deb/build.sh
# says what it holds), and its check: lintian without errors, dpkg -i into
# a throwaway root, files, user, unit, versions (packaging/deb/check.sh).
deb:
	packaging/deb/build.sh bin

deb-check:
	packaging/deb/check.sh "$$(packaging/deb/build.sh bin)"

# Manual pages and shell completions, generated from the commands, into
# bin/share (the Debian package installs them).
man: build
	$(GO) run ./internal/cmd/gendocs -quasimd bin/quasimd -out bin/share

# The C client: a static library and its header. Programs that link it
# link with -pthread too (the span recorder's background thread).
libquasim: bin/libquasim.a

bin/libquasim.a: runtime/c/quasim.c runtime/c/quasim.h
	@mkdir -p bin
	$(CC) $(QUASIM_CFLAGS) $(CFLAGS) -pthread -c runtime/c/quasim.c -o bin/quasim.o
	ar rcs $@ bin/quasim.o

install-c: bin/libquasim.a
	install -D -m 0644 runtime/c/quasim.h $(DESTDIR)$(PREFIX)/include/quasim.h
	install -D -m 0644 bin/libquasim.a $(DESTDIR)$(PREFIX)/lib/libquasim.a

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/quasim.h $(DESTDIR)$(PREFIX)/lib/libquasim.a
	rm -f $(DESTDIR)$(PREFIX)/bin/quasimd $(DESTDIR)$(PREFIX)/bin/quasimctl $(DESTDIR)/etc/systemd/system/quasimd.service
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/quasim
