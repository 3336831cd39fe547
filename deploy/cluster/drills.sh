#!/usr/bin/env bash
# The drills of make cluster: each brings a failure to the running topology during a
# small onsale, prints its figures and a PASS/FAIL verdict, and checks the invariants
# on the primary afterwards (deploy/cluster/drill check: bookingtest's seat and money
# invariants and orphaned holds). The summary goes to docs/runs/cluster-drills.md.
#
#   deploy/cluster/drills.sh [drill…]     drills: balancer kill redis partition replica failover
#
# The failover drill comes last: after it the old primary is gone, and `make
# cluster-stop` and removing .data/cluster start afresh. The instances run with the
# proof of work off (the crowd is a program) and believe the host's X-Forwarded-For
# (the crowd names each buyer's address, as a CDN edge would).
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
data="$top/.data/cluster"
out=${DRILLS_OUT:-$top/docs/runs/cluster-drills.md}
work="$data/drills"
# lb and event are the drills' (deploy/cluster/drills/*.sh).
# shellcheck disable=SC2034
lb=http://10.77.0.40:8080
primary='postgres://boxoffice@10.77.0.11:5432/boxoffice?sslmode=disable'
pgbin=$(find /usr/lib/postgresql -maxdepth 2 -name bin | sort -V | tail -n 1)
BUYERS=${BUYERS:-3000}
SEATS=${SEATS:-2000}
log() { printf 'drills: %s\n' "$*" >&2; }
export PROOF_OF_WORK=off CLUSTER_TRUSTED_PROXIES=10.77.0.1/32

# ensure_cluster starts what is down, and restarts instances started without the
# drills' settings.
ensure_cluster() {
  local name pid
  if [ "$(cat "$data/mode" 2>/dev/null)" = netns ]; then
    for name in app1 app2 app3; do
      pid=$(cat "$data/$name.pid" 2>/dev/null || true)
      # A pid that is gone (an instance a drill killed) is cluster.sh's to restart.
      if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && ! tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx PROOF_OF_WORK=off; then
        kill "$pid"
        while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
      fi
    done
  fi
  "$top/deploy/cluster/cluster.sh" up >"$work/cluster-up.log" 2>&1 || { tail "$work/cluster-up.log" >&2; exit 1; }
  if "$pgbin/psql" -h 10.77.0.12 -U postgres -qAtc 'SELECT NOT pg_is_in_recovery()' | grep -q t; then
    primary='postgres://boxoffice@10.77.0.12:5432/boxoffice?sslmode=disable'
  fi
}

# new_event NAME: a stadium of $SEATS seats on sale in 10 s; sets slug and event.
new_event() {
  slug="$1-$(date +%s)"
  local line
  line=$(DATABASE_URL=$primary "$data/bin/boxoffice" seed-stadium -slug "$slug" -seats "$SEATS" -standing 200 \
    -onsale-in 10s -slots 400 -rate "${RATE:-50}" -token-ttl 2m)
  # shellcheck disable=SC2034
  event=$(sed -E 's/^event=([0-9]+).*/\1/' <<<"$line")
}

# crowd URL FILE [ARGS…]: the onsale simulator on $slug, its report in FILE.
crowd() {
  local url=$1 file=$2 host; shift 2
  host=${url#http://}
  "$data/bin/onsale" run -url "$url" -allow-host "${host%:*}" -event "$slug" -db "$primary" \
    -buyers "$BUYERS" -early-window 10s -burst 5s -duration "${DURATION:-45s}" -settle 40s -progress 10s "$@" >"$file" 2>&1
}

# figures FILE: the lines of a simulator's report a summary quotes.
figures() {
  grep -E '^(not sold out|sold out|holds |admission:|  hold |  checkout |  pay |  session )' "$1"
  sed -n '/^errors:/,/^refused/p' "$1" | grep -v '^refused'
  grep -A5 'INVARIANTS BROKEN' "$1" || echo "invariants (API and SQL): held"
}

check() { "$data/bin/drill" check -db "$primary" -event "$1"; }

verdict=()
# record NAME PASS|FAIL COMMAND TEXTFILE: one drill's part of the summary.
record() {
  verdict+=("| $1 | $2 |")
  { printf '\n## %s: %s\n\n```sh\n%s\n```\n\n```\n' "$1" "$2" "$3"; cat "$4"; printf '```\n'; } >>"$work/summary.md"
  printf '%s: %s\n' "$1" "$2" >&2
}
ok() { [ "$1" = 0 ] && echo PASS || echo FAIL; }

for f in "$top"/deploy/cluster/drills/*.sh; do
  # shellcheck source=/dev/null
  . "$f"
done

main() {
  mkdir -p "$work"
  : >"$work/summary.md"
  (cd "$top" && go build -o "$data/bin/onsale" ./cmd/onsale && go build -o "$data/bin/drill" ./deploy/cluster/drill) || exit 1
  ensure_cluster
  local d drills=("$@")
  [ ${#drills[@]} -gt 0 ] || drills=(balancer kill redis partition replica failover)
  for d in "${drills[@]}"; do
    log "drill $d"
    "drill_$d"
  done
  {
    printf '# Cluster drills\n\nWhat `make cluster-drills` (deploy/cluster/drills.sh) saw on this machine, two cores\n'
    printf 'shared with other work, %s seats and %s buyers an onsale. Each drill checks the\n' "$SEATS" "$BUYERS"
    printf 'invariants on the primary afterwards (deploy/cluster/drill check).\n\n| drill | verdict |\n|---|---|\n'
    printf '%s\n' "${verdict[@]}"
    cat "$work/summary.md"
  } >"$out"
  log "summary in $out"
  printf '%s\n' "${verdict[@]}"
  ! printf '%s\n' "${verdict[@]}" | grep -q FAIL
}

main "$@"
