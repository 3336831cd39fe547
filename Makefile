# boxoffice: `make` lists the targets. Targets that need PostgreSQL and Redis bring up
# private ones under .data/ through .ci/services.sh, unless DATABASE_URL and REDIS_URL
# already name running ones; likewise a mailpit mail catcher (MAILPIT_URL).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
# A recipe is one bash script, so the environment from .ci/services.sh reaches the
# commands after it.
.ONESHELL:
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules

# sqlc runs pinned through `go run` so its heavy dependencies stay out of our go.mod.
SQLC := go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1
# Extra arguments for `make run` / `make bench`, e.g. make bench ARGS='-seats 5000'.
ARGS ?=
# What `make test` runs, e.g. make test PKG=./internal/booking/...
PKG ?= ./...
TESTFLAGS ?= -race -count=1 -timeout 20m

# `eval "$(.ci/services.sh)"` alone would ignore a failing services.sh (eval of an
# empty string succeeds); through a variable assignment, -e stops the recipe.
SERVICES = svc_env=$$(.ci/services.sh); eval "$$svc_env"
# make test also needs nginx (the CDN test) and Chromium (the browser tests).
TEST_SERVICES = svc_env=$$(.ci/services.sh test); eval "$$svc_env"

.PHONY: help run test verify generate vendor bench bench-holds bench-confirm bench-best bench-arrive bench-queue bench-sse bench-cdn onsale services services-stop clean-data cluster cluster-stop cluster-status cluster-drills

help: ## list the targets
	@awk 'BEGIN { FS = ":.*## " } /^[a-z][a-z-]*:.*## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

run: ## start services (and the mailpit mail catcher), migrate, seed, then serve (ARGS go to serve)
	$(SERVICES)
	# Email goes to the local mail catcher unless SMTP_URL names a server.
	mail_note="mail: sent through the SMTP_URL of your environment"
	if [ -z "$${SMTP_URL:-}" ]; then
	  export SMTP_URL="$$MAILPIT_SMTP_URL"
	  mail_note="mail: every email lands in mailpit; read it on $$MAILPIT_URL"
	fi
	# /metrics on a listener of its own, loopback only, unless METRICS_ADDR says otherwise.
	export METRICS_ADDR="$${METRICS_ADDR-127.0.0.1:9091}"
	go run ./cmd/boxoffice migrate
	go run ./cmd/boxoffice seed
	echo "$$mail_note"
	exec go run ./cmd/boxoffice serve $(ARGS)

test: verify ## verify, then go test -race every package against real services (PostgreSQL, Redis, mailpit), nginx and Chromium
	$(TEST_SERVICES)
	go test $(TESTFLAGS) $(PKG)

verify: generate ## check generated code is fresh, gofmt, templ fmt, go vet, no run ids in code
	if ! git diff --exit-code --stat -- internal/db views; then
	  echo 'verify: generated code in internal/db or views is stale: run `make generate` and commit the result' >&2
	  exit 1
	fi
	untracked=$$(git status --porcelain --untracked-files=all -- internal/db views | grep '^??' || true)
	if [ -n "$$untracked" ]; then
	  printf 'verify: generated files not committed:\n%s\n' "$$untracked" >&2
	  exit 1
	fi
	unformatted=$$(git ls-files -z --cached --others --exclude-standard -- '*.go' | xargs -0 -r gofmt -l)
	if [ -n "$$unformatted" ]; then
	  printf 'verify: not gofmt-ed (run gofmt -w):\n%s\n' "$$unformatted" >&2
	  exit 1
	fi
	go tool templ fmt -fail views
	go vet ./...
	# Comments give the reason in the present tense; run ids (t57i, p44m, r128a) go to
	# commit messages and docs/runs/. Generated code and tests are not checked.
	runids=$$(git ls-files -z --cached --others --exclude-standard -- '*.go' 'queries/*.sql' ':!:*_test.go' \
	  | xargs -0 -r grep -LZ '^// Code generated .* DO NOT EDIT\.$$' \
	  | xargs -0 -r grep -nE '(^|[^\\[:alnum:]_])[a-z][0-9]{2,3}[a-r]([^[:alnum:]_]|$$)' || true)
	if [ -n "$$runids" ]; then
	  printf 'verify: run ids in code (say the reason without them; the run belongs in the commit message or docs/runs/):\n%s\n' "$$runids" >&2
	  exit 1
	fi

# templ is a `go tool` in go.mod, so its generator and runtime versions always match.
generate: ## regenerate sqlc (internal/db) and templ (views) code
	$(SQLC) generate
	go tool templ generate -path views

# The pinned front-end scripts, fetched again from npm (static/js/vendor/README.md).
HTMX := htmx.org@2.0.11 htmx-ext-sse@2.2.4 htmx-ext-response-targets@2.0.4
ALTCHA := altcha@3.2.2
vendor: ## fetch the pinned htmx and ALTCHA scripts again from npm into static/js/vendor
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT
	(cd "$$tmp" && npm pack --silent $(HTMX) $(ALTCHA) >/dev/null && for f in *.tgz; do mkdir "$${f%.tgz}" && tar xzf "$$f" -C "$${f%.tgz}"; done)
	cp "$$tmp"/htmx.org-2.0.11/package/dist/htmx.min.js static/js/vendor/htmx-2.0.11.min.js
	cp "$$tmp"/htmx-ext-sse-2.2.4/package/dist/sse.min.js static/js/vendor/htmx-ext-sse-2.2.4.min.js
	cp "$$tmp"/htmx-ext-response-targets-2.0.4/package/dist/response-targets.min.js static/js/vendor/htmx-ext-response-targets-2.0.4.min.js
	# ALTCHA's build without inline styles or workers (the page's CSP allows neither),
	# its SHA worker, and its stylesheet.
	cp "$$tmp"/altcha-3.2.2/package/dist/external/altcha.min.js static/js/vendor/altcha-3.2.2.min.js
	cp "$$tmp"/altcha-3.2.2/package/dist/workers/sha.js static/js/vendor/altcha-3.2.2-sha-worker.js
	cp "$$tmp"/altcha-3.2.2/package/dist/external/altcha.css static/js/vendor/altcha-3.2.2.css
	sha256sum static/js/vendor/*.js static/js/vendor/*.css

bench: ## the benchmark set, each figure next to its ceiling from the same run: holds and confirm vs pgbench, arrivals vs a minimal net/http server, queue vs redis-benchmark, cached page vs static file, SSE vs a minimal hub (a few minutes; ARGS go to bench holds, confirm, best and arrive)
	$(SERVICES)
	.ci/bench.sh $(ARGS)

# One benchmark of cmd/bench, named by the target: make bench-holds runs `bench holds`.
BENCH_ONE = $(SERVICES); go run ./cmd/bench $(@:bench-%=%) $(ARGS)
bench-holds: ## start services, then exact one-seat holds through the API against pgbench (bench holds; ARGS go to it)
	$(BENCH_ONE)
bench-confirm: ## start services, then pay + webhook confirmation against pgbench (bench confirm; ARGS go to it)
	$(BENCH_ONE)
bench-best: ## start services, then best available with the cheap seats held against a fresh event (bench best; ARGS go to it)
	$(BENCH_ONE)
bench-arrive: ## start services, then the crowd's arrivals against a minimal net/http server (bench arrive; ARGS go to it)
	$(BENCH_ONE)
bench-queue: ## start services, then the waiting room against redis-benchmark (bench queue; ARGS go to it)
	$(BENCH_ONE)
bench-sse: ## start services, then the live map's SSE fan-out against a minimal hub (bench sse; ARGS go to it)
	$(BENCH_ONE)

bench-cdn: ## the cached event page through the reference nginx next to a static file (wrk)
	.ci/bench-cdn.sh $(ARGS)

# The onsale simulation: a 50,000-seat stadium (and a standing field of 2,000) whose
# onsale is a minute ahead, a boxoffice serving it in the background, and the crowd
# (cmd/onsale, 20,000 buyers by default) against it. Each run sells a fresh event in a
# database and under a Redis prefix of its own. The report goes to the terminal, .data/onsale.json and
# .data/onsale.svg, a line per buyer to .data/onsale-trace.csv; the server's log to
# .data/onsale-server.log. ONSALE_* change the
# event (and ONSALE_DB_CONNS the server's pool), ARGS go to the simulator (e.g.
# ARGS='-buyers 5000').
ONSALE_SEATS ?= 50000
ONSALE_STANDING ?= 2000
ONSALE_SLOTS ?= 2000
ONSALE_RATE ?= 128
ONSALE_PORT ?= 18080
ONSALE_METRICS_PORT ?= 18091
ONSALE_DB_CONNS ?= 8
# ONSALE_SIM_PROCS, if set, is the simulator's GOMAXPROCS (the server keeps both
# cores): 1 makes the crowd cheaper and its own tails longer (docs/BENCHMARKS.md).
ONSALE_SIM_PROCS ?=
# ONSALE_SIM_NICE, if set, runs the simulator at that niceness: 19 lets the server,
# PostgreSQL and Redis take the cores first, the nearest this one machine comes to a
# crowd on machines of its own (its own figures then include its waits for a core).
ONSALE_SIM_NICE ?=
# Every simulated join solves the server's proof of work (cmd/onsale/proof.go). At
# the default difficulty the crowd's solving (~4.5 ms of a core a buyer, most of the
# 20,000 within a minute) would take the cores of the server it measures: work real
# buyers do on their own phones. The server's part (the challenge, the check, the
# replay memory) costs the same at any difficulty.
ONSALE_PROOF_MAXNUMBER ?= 1000
onsale: ## start services and a boxoffice with a 50,000-seat onsale, then run the simulated crowd against it (onsale run, cmd/onsale; ARGS go to it)
	$(SERVICES)
	mkdir -p .data/bin
	go build -o .data/bin/boxoffice ./cmd/boxoffice
	go build -o .data/bin/onsale ./cmd/onsale
	slug=stadium-$$(date +%s)
	# A database of its own for each run (the last run's is dropped as the next starts):
	# the admitter counts the stock of every event whose room is on, and the stadiums
	# of earlier runs, unwatched, cost it a 50,000-row read each a second.
	db="onsale_$${slug#stadium-}"
	for old in $$(psql "$$DATABASE_URL" -qAtc "SELECT datname FROM pg_database WHERE datname LIKE 'onsale\_%'"); do
	  psql "$$DATABASE_URL" -qc "DROP DATABASE $$old WITH (FORCE)"
	done
	psql "$$DATABASE_URL" -qc "CREATE DATABASE $$db"
	export DATABASE_URL="$$(printf '%s' "$$DATABASE_URL" | sed -E "s|^([a-z]+://[^/]*/)[^?]*|\1$$db|")"
	echo "onsale: database $$db"
	.data/bin/boxoffice migrate
	.data/bin/boxoffice seed-stadium -slug "$$slug" -seats $(ONSALE_SEATS) -standing $(ONSALE_STANDING) -onsale-in 60s \
	  -slots $(ONSALE_SLOTS) -rate $(ONSALE_RATE) -token-ttl 3m
	ADDR=127.0.0.1:$(ONSALE_PORT) METRICS_ADDR=127.0.0.1:$(ONSALE_METRICS_PORT) \
	  REDIS_PREFIX="onsale:$$slug:" HOLD_TTL=1m DB_MAX_CONNS=$(ONSALE_DB_CONNS) LOG_FORMAT=json \
	  PROOF_OF_WORK_MAXNUMBER=$(ONSALE_PROOF_MAXNUMBER) \
	  .data/bin/boxoffice serve >.data/onsale-server.log 2>&1 &
	server=$$!
	trap 'kill $$server 2>/dev/null; wait $$server || true' EXIT
	for _ in $$(seq 100); do
	  curl -sf http://127.0.0.1:$(ONSALE_PORT)/readyz >/dev/null && break
	  kill -0 $$server 2>/dev/null || { tail -20 .data/onsale-server.log >&2; exit 1; }
	  sleep 0.2
	done
	GOMAXPROCS=$(ONSALE_SIM_PROCS) $(if $(ONSALE_SIM_NICE),nice -n $(ONSALE_SIM_NICE)) .data/bin/onsale run -url http://127.0.0.1:$(ONSALE_PORT) -event "$$slug" -db "$$DATABASE_URL" \
	  -metrics http://127.0.0.1:$(ONSALE_METRICS_PORT)/metrics \
	  -max-qty 8 -json .data/onsale.json -svg .data/onsale.svg -trace .data/onsale-trace.csv $(ARGS)

services: ## start PostgreSQL, Redis and mailpit under .data/, print export lines to eval
	@.ci/services.sh

services-stop: ## stop the PostgreSQL, Redis and mailpit under .data/
	.ci/services.sh stop

# The topology for more than one machine, on this one (deploy/cluster/cluster.sh; the
# README's "More than one machine"): each part in a network namespace of its own.
cluster: ## start a primary and a replica, PgBouncer, a 3+3 Redis Cluster, three boxoffice instances and nginx in front (.data/cluster/)
	deploy/cluster/cluster.sh up

cluster-stop: ## stop everything make cluster started and remove its namespaces (data kept)
	deploy/cluster/cluster.sh down

cluster-drills: ## fail parts of make cluster during small onsales and check every invariant (deploy/cluster/drills.sh; docs/runs/cluster-drills.md)
	deploy/cluster/drills.sh $(ARGS)

cluster-status: ## each part of make cluster's topology: address, and up or down
	@deploy/cluster/cluster.sh status

clean-data: services-stop ## stop the services and delete .data/
	rm -rf .data

# Backup and point-in-time restore (deploy/backup/pitr-drill.sh, docs/OPERATIONS.md): a
# PostgreSQL of its own with WAL archiving, a base backup, an onsale, a restore to a
# time in its middle, the checks; Redis from the services.
.PHONY: backup-drill
backup-drill: ## WAL archiving, a base backup, an onsale, a restore to a time in its middle, every check after it (.data/backup/)
	$(SERVICES)
	deploy/backup/pitr-drill.sh
