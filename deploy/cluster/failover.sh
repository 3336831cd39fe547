#!/usr/bin/env bash
# PostgreSQL primary failover for make cluster: stops the primary (pg1), promotes the
# streaming replica (pg2) and repoints PgBouncer at it, so that the instances, which
# reach PostgreSQL only through PgBouncer, carry on against the new primary.
#
#   deploy/cluster/failover.sh        prints "stopped=<unix ns>" when the primary is down
#
# Afterwards the old primary is gone (no rewind): `make cluster-stop` and removing
# .data/cluster start afresh.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
data="$top/.data/cluster"
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
log() { printf 'failover: %s\n' "$*" >&2; }
as_pg() { ip netns exec "bxc-$1" runuser -u postgres -- "${@:2}"; }

[ "$(cat "$data/mode" 2>/dev/null)" = netns ] || { log "no make cluster in network namespaces under $data"; exit 1; }
"$bin/psql" -h 10.77.0.12 -U postgres -qAtc 'SELECT pg_is_in_recovery()' | grep -q t ||
  { log "pg2 is not a replica: failed over already?"; exit 1; }

# The primary's crash, as a machine lost would be: no checkpoint, no goodbye.
as_pg pg1 "$bin/pg_ctl" -D "$data/pg1" -m immediate stop >&2
echo "stopped=$(date +%s%N)"
log "primary stopped; promoting the replica"
as_pg pg2 "$bin/pg_ctl" -D "$data/pg2" -w -t 60 promote >&2
# PgBouncer reads its [databases] again on SIGHUP; its server connections to the old
# primary are broken already, new ones go to the new primary.
sed -i 's/host=10\.77\.0\.11 /host=10.77.0.12 /' "$data/bouncer/pgbouncer.ini"
kill -HUP "$(cat "$data/bouncer/pgbouncer.pid")"
log "PgBouncer now names pg2 (10.77.0.12); the new primary answers: $("$bin/psql" -h 10.77.0.12 -U postgres -qAtc 'SELECT NOT pg_is_in_recovery()')"
