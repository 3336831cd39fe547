#!/usr/bin/env bash
# The benchmark set, one after the other on the same machine, each figure next to its
# ceiling measured in the same run (ratios are what the README quotes):
#
#   holds     API exact one-seat holds  vs pgbench, the same conditional UPDATE (bench holds)
#   confirm   API pay + webhook confirm vs pgbench, the confirm statements      (bench confirm)
#   best      best available 4, 20,000 held vs a fresh event                    (bench best)
#   arrive    a new session + a queue join vs a minimal net/http server's        (bench arrive)
#   queue     the waiting room's join and position check vs redis-benchmark     (bench queue)
#   cdn       the cached event page through nginx vs a static file, same nginx  (deploy/cdn, wrk)
#   sse       the live map's fan-out vs a minimal net/http hub                  (bench sse)
#
# Each tool's full report is kept in .data/bench/<UTC time>/; a summary is printed at
# the end. Arguments go to each of bench holds, confirm, best and arrive (the flags
# they share: -clients, -duration, -rounds, …). Needs PostgreSQL, Redis
# (.ci/services.sh, or DATABASE_URL and REDIS_URL set), pgbench, redis-benchmark, and
# for the cdn part nginx and wrk (installed when missing, by .ci/bench-cdn.sh). A few
# minutes.
#
#   .ci/bench.sh [bench flags]
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf 'bench: %s\n' "$*" >&2; }

if [ -z "${DATABASE_URL:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  svc_env=$(.ci/services.sh)
  eval "$svc_env"
fi
dir=.data/bench/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$dir"
log "reports go to $dir; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
{
  echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!.data' || echo ' + uncommitted changes')"
  echo "$(nproc) cores, $(uname -r), $(go version | cut -d' ' -f3)"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$dir/machine.txt"

mkdir -p .data/bin
go build -o .data/bin/bench ./cmd/bench
for m in holds confirm best arrive; do
  log "bench $m"
  .data/bin/bench "$m" -out "$dir/$m.md" "$@" >/dev/null
done
log "bench queue"
.data/bin/bench queue >"$dir/queue.txt"
log "the cached page through the reference nginx (1 round)"
BOXOFFICE_BENCH_ROUNDS=1 .ci/bench-cdn.sh >"$dir/cdn.txt"
log "bench sse (10 s measured)"
.data/bin/bench sse -duration 10s >"$dir/sse.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/machine.txt"

# The summary: boxoffice, its ceiling from the same run, the ratio.
{
  echo
  echo "== benchmark set, $(date -u '+%Y-%m-%d %H:%M UTC'); $(head -n 1 "$dir/machine.txt"); full reports in $dir"
  echo
  echo "-- holds, confirm, best available, arrivals (bench; ratio rows in bold)"
  # One table: the first report's header, then every report's rows.
  sed -n '/^| measurement | rate/,/^|---/p' "$dir/holds.md"
  for m in holds confirm best arrive; do
    sed -n '/^| measurement | rate/,/^$/p' "$dir/$m.md" | sed '1,2d;/^$/d'
  done
  echo
  echo "-- waiting room (bench queue; Room API vs redis-benchmark)"
  sed -n '/^ *operation/,/^$/p' "$dir/queue.txt"
  echo "-- cached event page (req/s through nginx)"
  awk '/^BenchmarkProxy\// {
         for (i = 1; i < NF; i++) if ($(i+1) == "req/s") v = $i
         n = $1; sub(/^BenchmarkProxy\//, "", n); sub(/-[0-9]+$/, "", n); r[n] = v
         printf "  %-18s %10.0f req/s\n", n, v
       }
       END { if (r["static-file"] > 0) printf "  cached page / static file: %.2f\n", r["cached-page"] / r["static-file"] }' "$dir/cdn.txt"
  echo
  echo "-- live map fan-out (bench sse; change-to-client latency)"
  # bench sse prints its table after each side: the last one has them all.
  awk '/^side / { n = 0; on = 1 } on && NF > 0 { line[n++] = $0 }
       on && $1 == "boxoffice" { p50 = $6; p99 = $8 }
       on && $1 == "minimal" { m50 = $6; m99 = $8 }
       on && NF == 0 { on = 0 }
       END {
         for (i = 0; i < n; i++) print "  " line[i]
         if (m50 > 0 && m99 > 0) printf "  boxoffice / minimal hub: p50 %.2f, p99 %.2f\n", p50 / m50, p99 / m99
       }' "$dir/sse.txt"
} | tee "$dir/summary.txt"
