# Silas: `make run` starts the daemon on embedded defaults; `make test` runs
# every test. See README.md.

GO      ?= go
BIN     := bin/silas
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
PKGS    := ./...

.PHONY: run build test fuzz bench bench-chaos bench-soak bench-go proto lint demo mockllm clean

## run: build and start the daemon (web channel on http://127.0.0.1:8420)
run: build
	./$(BIN) serve --log-format console

## build: write the static binary to bin/silas
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/silas

## test: the system packages the tests need (.ci/deps installs them as root,
## else names them), formatting, vet, every test with the race detector, and
## every fuzz target for 4,000 inputs
test:
	@./.ci/deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 30m $(PKGS)
	@FUZZTIME=4000x ./.ci/fuzz

## fuzz: every fuzz target for FUZZTIME each (default 4000x inputs, or a duration such as 30s; make test runs it too)
fuzz:
	./.ci/fuzz

## bench: the load bench's standard matrix (startup; 1, 10, 50 and 1000 chatbot
## customers against a 50 ms mock model; 10,000 idle customers) run against the
## release build of bin/silas, with the mock and the driver as separate processes.
## Every load also runs against bin/baseline, a bare daemon with the same protocol
## subset and mock but no persistence and no gates, interleaved with silas and
## twice each (best run kept); the report gives silas as a ratio of it (turns/s,
## CPU per turn, peak RSS; overhead p50/p99 differences), which is what to track
## on this shared, noisy machine. Writes bench/results/latest.{json,md} plus
## timestamped copies and ends by printing the table; about 3 minutes on the
## 2-core dev machine (each load run is capped at 1 minute). Single scenarios,
## -runs, -daemons and profiles: ./bin/bench -h. The Go micro-benchmarks are
## bench-go.
bench: build
	$(GO) build -o bin/mockllm ./bench/cmd/mockllm
	$(GO) build -o bin/baseline ./bench/cmd/baseline
	$(GO) build -o bin/bench ./bench/cmd/bench
	./bin/bench -matrix

## bench-chaos: 20 chatbot customers talk to bin/silas while it is killed with
## SIGKILL 10 times (some right after a send) and restarted on the same data
## dir; customers resume their session and resend what is unanswered. Reports
## acknowledged messages lost and turns answered twice differently (both must
## be 0, else it fails), answers redelivered and recovery times, into
## bench/results like make bench. About half a minute.
bench-chaos: build
	$(GO) build -o bin/mockllm ./bench/cmd/mockllm
	$(GO) build -o bin/bench ./bench/cmd/bench
	./bin/bench -chaos

## bench-soak: 20 customers drive bin/silas at half of a probed capacity for
## SOAK (default 30m), sampling RSS, goroutines, open files and the Badger
## size every minute; fails unless the process's own memory (anonymous RSS)
## and goroutines stay within 10% after the warm-up and the mapped table
## pages stay within the database's size. silas runs with a soft memory
## limit of SOAK_MEMORY_LIMIT MB (process.memory_soft_limit_mb; 0: none).
## E.g. make bench-soak SOAK=60m.
SOAK ?= 30m
SOAK_MEMORY_LIMIT ?= 256
bench-soak: build
	$(GO) build -o bin/mockllm ./bench/cmd/mockllm
	$(GO) build -o bin/bench ./bench/cmd/bench
	./bin/bench -soak $(SOAK) -soak-memory-limit $(SOAK_MEMORY_LIMIT)

## bench-go: Go micro-benchmarks of the hot paths (ns/op, B/op, allocs/op)
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## demo: the daemon against the local mock model server (no API key needed)
demo: build
	$(GO) build -o bin/mockllm ./bench/cmd/mockllm
	./bin/mockllm -addr 127.0.0.1:8421 & echo $$! > bin/mockllm.pid; \
	trap 'kill $$(cat bin/mockllm.pid)' EXIT; \
	SILAS_PROVIDERS__OPENROUTER__BASE_URL=http://127.0.0.1:8421/v1 OPENROUTER_API_KEY=demo \
	./$(BIN) serve --log-format console

## proto: regenerate protobuf code (none yet: actor messages are Go structs)
proto:
	@echo "no .proto files yet: messages that will cross node boundaries are Go structs in messages/"

## lint: formatting and vet
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)

clean:
	rm -rf bin
