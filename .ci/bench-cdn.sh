#!/usr/bin/env bash
# Measures the reference caching proxy (deploy/cdn): requests per second for the
# cached event page through nginx, next to the same nginx serving the same bytes as a
# static file, in one run. wrk and nginx come from Debian's packages, installed here
# when missing (not in make test). The two alternate, BOXOFFICE_BENCH_ROUNDS times
# (default 3), so that a busy neighbour on the shared cores weighs on both alike; each
# wrk run lasts BOXOFFICE_BENCH_DURATION (default 10s). Arguments go to `go test`
# (e.g. -v for wrk's own report); the output is benchstat's input.
#
#   .ci/bench-cdn.sh [go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf 'bench-cdn: %s\n' "$*" >&2; }

missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]} from Debian's packages"
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

svc_env=$(.ci/services.sh)
eval "$svc_env"
log "$(nproc) cores; $(nginx -v 2>&1 || /usr/sbin/nginx -v 2>&1); $(wrk --version 2>&1 | head -n 1)"
for _ in $(seq "${BOXOFFICE_BENCH_ROUNDS:-3}"); do
  go test -run '^$' -bench '^BenchmarkProxy$' -benchtime 1x -count 1 "$@" ./deploy/cdn
done
