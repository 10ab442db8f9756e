GO ?= go
PKGS := ./...
FUZZTIME ?= 10s

.PHONY: all build test test-race vet fmt fmt-check fuzz-smoke bench-search ci

all: fmt-check vet test

build:
	$(GO) build -o bin/ ./cmd/...

test:
	$(GO) test $(PKGS)

test-race:
	$(GO) test -race $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -s -w $$(git ls-files '*.go')

fmt-check:
	@out=$$(gofmt -s -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt -s needed on:"; echo "$$out"; exit 1; fi

# One short coverage-guided pass per fuzz target.
fuzz-smoke:
	$(GO) test ./genome -run '^$$' -fuzz '^FuzzCompile$$' -fuzztime $(FUZZTIME)
	$(GO) test ./genome -run '^$$' -fuzz '^FuzzEvalList$$' -fuzztime $(FUZZTIME)
	$(GO) test ./genome -run '^$$' -fuzz '^FuzzParseT1$$' -fuzztime $(FUZZTIME)
	$(GO) test ./evaluate/replay -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/quasimctl/cli -run '^$$' -fuzz '^FuzzParseTraceLine$$' -fuzztime $(FUZZTIME)

# The search-quality benchmark of the README, on the shared real-GPU spaces.
bench-search: build
	./bin/quasimctl bench --space ../shared/spaces --strategy random,es --budget 400 --seeds 20 --peers ../shared/peers/kernel_tuner.json
