#!/usr/bin/env bash
# The topology for more than one machine, on one: a PostgreSQL primary and a streaming
# replica, PgBouncer in transaction mode in front of the primary, a Redis Cluster of
# three primaries and three replicas, three boxoffice instances, and the reference
# nginx (deploy/cdn) in front as load balancer and cache.
#
#   deploy/cluster/cluster.sh up | down | status
#
# Each part runs in a network namespace of its own (bxc-<part>), joined to the host by
# a veth pair on the bridge bxc0 (10.77.0.0/24, the host 10.77.0.1), so that cutting
# one part's link off is a real partition. Where namespaces cannot be made (not root,
# no `ip netns`), every part runs on 127.0.0.1 with a port of its own instead, and it
# says so; a partition then cannot be drilled. CLUSTER_NETNS=off asks for loopback.
#
# Data, logs and pid files live under .data/cluster/ (git-ignored). Debian's packages
# (postgresql, pgbouncer, redis-server, nginx) are installed when missing. Everything
# it says goes to stderr; `up` prints the addresses on stdout at the end.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
data="$top/.data/cluster"
log() { printf 'cluster: %s\n' "$*" >&2; }

# The parts, by name: the last octet of its address on the bridge, and the port it
# uses when it has to share 127.0.0.1 (loopback mode).
declare -A octet=([pg1]=11 [pg2]=12 [bouncer]=13
  [redis1]=21 [redis2]=22 [redis3]=23 [redis4]=24 [redis5]=25 [redis6]=26
  [app1]=31 [app2]=32 [app3]=33 [nginx]=40)
parts=(pg1 pg2 bouncer redis1 redis2 redis3 redis4 redis5 redis6 app1 app2 app3 nginx)
redis_parts=(redis1 redis2 redis3 redis4 redis5 redis6)
app_parts=(app1 app2 app3)
bridge=bxc0
net=10.77.0

# mode is netns or loopback: what `up` could make, remembered in $data/mode.
mode=
load_mode() { mode=$(cat "$data/mode" 2>/dev/null || echo none); }

# host NAME is the part's address; port NAME KIND its port (the service's own in a
# namespace, 24500 + octet on loopback, below Linux's ephemeral range).
host() { if [ "$mode" = netns ]; then echo "$net.${octet[$1]}"; else echo 127.0.0.1; fi; }
port() {
  if [ "$mode" = loopback ]; then echo $((24500 + ${octet[$1]})); return; fi
  case $1 in
    pg*) echo 5432 ;;
    bouncer) echo 6432 ;;
    redis*) echo 7000 ;;
    *) echo 8080 ;;
  esac
}
addr() { echo "$(host "$1"):$(port "$1")"; }

# inside NAME CMD… runs CMD in the part's namespace (or here, on loopback).
inside() {
  local name=$1; shift
  if [ "$mode" = netns ]; then ip netns exec "bxc-$name" "$@"; else "$@"; fi
}
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

apt_updated=
need() { # need PROGRAM PACKAGE
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "$(pg_bin)/$1" ] && return 0
  [ "$(id -u)" = 0 ] || { log "$1 is missing: install Debian's $2 (as root)"; exit 1; }
  if [ -z "$apt_updated" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    apt_updated=1
  fi
  log "installing $2 from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2
  # Debian's packages start their own services: this cluster runs its own.
  case $2 in
    pgbouncer) service pgbouncer stop >/dev/null 2>&1 || true ;;
    nginx) service nginx stop >/dev/null 2>&1 || true ;;
    redis-server) service redis-server stop >/dev/null 2>&1 || true ;;
  esac
}
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# make_network makes the bridge and one namespace per part; it fails (having undone
# what it made) where namespaces cannot be made.
make_network() {
  [ "$(id -u)" = 0 ] || return 1
  ip link show "$bridge" >/dev/null 2>&1 || {
    ip link add "$bridge" type bridge 2>/dev/null || return 1
    ip addr add "$net.1/24" dev "$bridge"
    ip link set "$bridge" up
  }
  local name
  for name in "${parts[@]}"; do
    ip netns list | grep -qw "bxc-$name" && continue
    if ! ip netns add "bxc-$name" 2>/dev/null; then remove_network; return 1; fi
    ip link add "vbx-$name" type veth peer name eth0 netns "bxc-$name"
    ip link set "vbx-$name" master "$bridge" up
    ip -n "bxc-$name" link set lo up
    ip -n "bxc-$name" addr add "$net.${octet[$name]}/24" dev eth0
    ip -n "bxc-$name" link set eth0 up
    ip -n "bxc-$name" route add default via "$net.1"
  done
}

remove_network() {
  local name
  for name in "${parts[@]}"; do
    ip link del "vbx-$name" 2>/dev/null || true
    ip netns del "bxc-$name" 2>/dev/null || true
  done
  ip link del "$bridge" 2>/dev/null || true
}

# wait_for WHAT CMD… retries CMD for up to 30 s.
wait_for() {
  local what=$1; shift
  for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  log "$what did not come up"; return 1
}

start_postgres() {
  local bin; bin=$(pg_bin)
  local pg1="$data/pg1" pg2="$data/pg2"
  mkdir -p "$data/run/pg1" "$data/run/pg2"
  [ "$(id -u)" = 0 ] && chown postgres "$data" "$data/run" "$data/run/pg1" "$data/run/pg2"
  if [ ! -s "$pg1/PG_VERSION" ]; then
    log "creating the primary in $pg1"
    as_postgres "$bin/initdb" -D "$pg1" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$data/initdb.log" 2>&1
    cat >>"$pg1/postgresql.conf" <<CONF
wal_level = replica
max_wal_senders = 5
hot_standby = on
max_connections = 200
shared_buffers = 256MB
log_min_messages = warning
CONF
    # Every address on the bridge may connect and replicate: a private network.
    cat >>"$pg1/pg_hba.conf" <<HBA
host all all $net.0/24 trust
host replication all $net.0/24 trust
HBA
  fi
  pg_running "$pg1" || as_postgres_in pg1 "$bin/pg_ctl" -D "$pg1" -l "$data/pg1.log" -w -t 60 \
    -o "-h $(host pg1) -p $(port pg1) -k $data/run/pg1" start >&2
  "$bin/psql" -h "$(host pg1)" -p "$(port pg1)" -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 >&2 <<SQL
SELECT 'CREATE ROLE boxoffice LOGIN SUPERUSER' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'boxoffice')
\gexec
SELECT 'CREATE ROLE replicator LOGIN REPLICATION' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'replicator')
\gexec
SELECT 'CREATE DATABASE boxoffice OWNER boxoffice' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'boxoffice')
\gexec
SQL
  if [ ! -s "$pg2/PG_VERSION" ]; then
    log "copying the primary into the replica (pg_basebackup -R)"
    mkdir -p "$pg2"; [ "$(id -u)" = 0 ] && chown postgres "$pg2"; chmod 700 "$pg2"
    as_postgres_in pg2 "$bin/pg_basebackup" -h "$(host pg1)" -p "$(port pg1)" -U replicator -D "$pg2" -R -X stream --checkpoint=fast >&2
  fi
  pg_running "$pg2" || as_postgres_in pg2 "$bin/pg_ctl" -D "$pg2" -l "$data/pg2.log" -w -t 60 \
    -o "-h $(host pg2) -p $(port pg2) -k $data/run/pg2" start >&2
}
pg_running() { as_postgres "$(pg_bin)/pg_ctl" -D "$1" status >/dev/null 2>&1; }
# as_postgres_in NAME CMD… runs CMD in the part's namespace as the postgres user:
# PostgreSQL and PgBouncer refuse to run as root.
as_postgres_in() {
  local name=$1; shift
  if [ "$(id -u)" = 0 ]; then inside "$name" runuser -u postgres -- "$@"; else inside "$name" "$@"; fi
}

start_bouncer() {
  need pgbouncer pgbouncer
  local dir="$data/bouncer"
  mkdir -p "$dir"
  # Transaction mode: a server connection is a client's for one transaction only.
  # PgBouncer 1.18 (Debian 12) keeps no prepared statements across them, so the
  # instances use an exec mode without named statements (DATABASE_POOLER=transaction).
  cat >"$dir/pgbouncer.ini" <<INI
[databases]
boxoffice = host=$(host pg1) port=$(port pg1) dbname=boxoffice
; any other database of the primary too: a benchmark's own (cmd/bench -pooler)
* = host=$(host pg1) port=$(port pg1)
[pgbouncer]
listen_addr = $(host bouncer)
listen_port = $(port bouncer)
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = 40
max_client_conn = 1000
server_reset_query =
ignore_startup_parameters = extra_float_digits
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
  printf '"boxoffice" ""\n' >"$dir/userlist.txt"
  [ "$(id -u)" = 0 ] && chown -R postgres "$dir"
  alive "$dir/pgbouncer.pid" pgbouncer || as_postgres_in bouncer pgbouncer -d "$dir/pgbouncer.ini" >&2
  wait_for PgBouncer "$(pg_bin)/psql" "postgres://boxoffice@$(addr bouncer)/boxoffice" -qAtc 'SELECT 1'
}

# alive PIDFILE NAME: the pid file names a running NAME.
alive() {
  local pid; pid=$(cat "$1" 2>/dev/null || true)
  [ -n "$pid" ] && grep -q "$2" "/proc/$pid/cmdline" 2>/dev/null
}

start_redis() {
  need redis-server redis-server
  local name nodes=()
  for name in "${redis_parts[@]}"; do
    mkdir -p "$data/$name"
    nodes+=("$(addr "$name")")
    redis-cli -h "$(host "$name")" -p "$(port "$name")" ping 2>/dev/null | grep -q PONG && continue
    # No snapshots: Redis only mirrors, and a save stalls writes. Not protected: the
    # bridge is a private network, and the other nodes and the instances are not on
    # this node's loopback.
    inside "$name" redis-server --daemonize yes --bind "$(host "$name")" --port "$(port "$name")" \
      --cluster-enabled yes --cluster-config-file "$data/$name/nodes.conf" --cluster-node-timeout 2000 \
      --save "" --appendonly no --protected-mode no --dir "$data/$name" --pidfile "$data/$name/redis.pid" \
      --logfile "$data/$name/redis.log" >&2
    wait_for "Redis $name" bash -c "redis-cli -h $(host "$name") -p $(port "$name") ping | grep -q PONG"
  done
  # A cluster made before finds itself again from its nodes.conf files.
  if [ "$(grep -c connected "$data/redis1/nodes.conf" 2>/dev/null || echo 0)" -ge 6 ]; then
    wait_for "the Redis Cluster" bash -c "redis-cli -h $(host redis1) -p $(port redis1) cluster info | grep -q cluster_state:ok"
  elif ! redis-cli -h "$(host redis1)" -p "$(port redis1)" cluster info | grep -q cluster_state:ok; then
    log "joining the Redis Cluster: three primaries, a replica each"
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$data/redis-create.log"
    wait_for "the Redis Cluster" bash -c "redis-cli -h $(host redis1) -p $(port redis1) cluster info | grep -q cluster_state:ok"
  fi
}

start_apps() {
  local bin="$data/bin/boxoffice" name primary redis
  mkdir -p "$data/bin"
  log "building boxoffice"
  (cd "$top" && go build -o "$bin" ./cmd/boxoffice)
  primary="postgres://boxoffice@$(addr pg1)/boxoffice?sslmode=disable"
  # Migrations run once, here, against the primary: their lock is a session lock,
  # which PgBouncer's transaction mode cannot keep.
  DATABASE_URL=$primary "$bin" migrate >&2
  DATABASE_URL=$primary "$bin" seed >&2
  redis="redis://$(addr redis1)?addr=$(addr redis2)&addr=$(addr redis3)"
  # CLUSTER_TRUSTED_PROXIES adds networks whose X-Forwarded-For the instances believe
  # (the drills' crowd on the host names each buyer's address as a CDN edge would);
  # the rest of the environment (PROOF_OF_WORK_MAXNUMBER, HOLD_TTL…) reaches them as is.
  # The test payment provider posts its webhooks to the balancer, as a real one posts
  # to the shop's public address: any instance confirms.
  for name in "${app_parts[@]}"; do
    alive "$data/$name.pid" boxoffice && continue
    # The pid file names the server itself: bash writes its own pid, then becomes it.
    # shellcheck disable=SC2016 # $$, $0 and $@ are the inner bash's
    inside "$name" env DATABASE_URL="postgres://boxoffice@$(addr bouncer)/boxoffice?sslmode=disable" \
      DATABASE_POOLER=transaction \
      DATABASE_REPLICA_URL="postgres://boxoffice@$(addr pg2)/boxoffice?sslmode=disable" \
      REDIS_URL="$redis" ADDR="$(addr "$name")" METRICS_ADDR="$(host "$name"):$(($(port "$name") + 1000))" \
      PAYMENT_WEBHOOK_URL="http://$(addr nginx)/api/v1/payments/webhook" \
      TRUSTED_PROXIES="$(host nginx)/32${CLUSTER_TRUSTED_PROXIES:+,$CLUSTER_TRUSTED_PROXIES}" BASE_URL="http://$(addr nginx)" \
      DB_MAX_CONNS=12 LOG_FORMAT=json \
      setsid bash -c 'echo $$ >"$0"; exec "$@"' "$data/$name.pid" "$bin" serve </dev/null >>"$data/$name.log" 2>&1 &
  done
  for name in "${app_parts[@]}"; do
    wait_for "boxoffice $name" curl -sf "http://$(addr "$name")/readyz"
  done
}

start_nginx() {
  need nginx nginx
  local conf user=
  [ "$(id -u)" = 0 ] && user=root
  conf=$(cd "$top" && go run ./deploy/cluster/lbconf -listen "$(addr nginx)" -dir "$data/nginx" ${user:+-user "$user"} \
    "$(addr app1)" "$(addr app2)" "$(addr app3)")
  alive "$data/nginx/nginx.pid" nginx && return 0
  inside nginx /usr/sbin/nginx -p "$data/nginx/" -c "$conf" -e "$data/nginx/error.log" >&2
  wait_for nginx curl -sf "http://$(addr nginx)/readyz"
}

up() {
  mkdir -p "$data"
  if [ "${CLUSTER_NETNS:-on}" = off ]; then
    mode=loopback
    log "CLUSTER_NETNS=off: every part runs on 127.0.0.1 with a port of its own, and a partition cannot be drilled"
  elif make_network; then
    mode=netns
  else
    mode=loopback
    log "network namespaces cannot be made here: every part runs on 127.0.0.1 with a port of its own, and a partition cannot be drilled"
  fi
  # The replica's primary_conninfo and Redis' nodes.conf name the addresses they were
  # made with: data made in one mode does not run in the other.
  local made; made=$(cat "$data/made-as" 2>/dev/null || echo "$mode")
  if [ "$made" != "$mode" ]; then
    [ "$mode" = netns ] && remove_network
    log "the data in $data was made with $made addresses, not $mode ones: stop, then rm -rf it to switch"
    exit 1
  fi
  echo "$mode" >"$data/made-as"
  echo "$mode" >"$data/mode"
  need initdb postgresql
  need curl curl
  start_postgres
  start_bouncer
  start_redis
  start_apps
  start_nginx
  status
}

# stop_pid PIDFILE NAME: ends the process the pid file names, if it is still NAME.
stop_pid() {
  local pid; pid=$(cat "$1" 2>/dev/null || true)
  if [ -n "$pid" ] && grep -q "$2" "/proc/$pid/cmdline" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$1"
}

down() {
  load_mode
  [ "$mode" = none ] && { log "no cluster under $data"; return 0; }
  local name bin; bin=$(pg_bin)
  [ -f "$data/nginx/nginx.pid" ] && stop_pid "$data/nginx/nginx.pid" nginx
  for name in "${app_parts[@]}"; do stop_pid "$data/$name.pid" boxoffice; done
  for name in "${redis_parts[@]}"; do
    redis-cli -h "$(host "$name")" -p "$(port "$name")" shutdown nosave >/dev/null 2>&1 || stop_pid "$data/$name/redis.pid" redis-server
  done
  stop_pid "$data/bouncer/pgbouncer.pid" pgbouncer
  for name in pg2 pg1; do
    [ -s "$data/$name/PG_VERSION" ] && { as_postgres "$bin/pg_ctl" -D "$data/$name" -m fast stop >&2 2>/dev/null || true; }
  done
  if [ "$mode" = netns ]; then
    # Whatever still runs in a namespace of this cluster was started by it: asked to
    # stop, then (after the instances' SHUTDOWN_TIMEOUT and a little) killed, so that
    # no process outlives its namespace.
    local left
    for name in "${parts[@]}"; do
      ip netns pids "bxc-$name" 2>/dev/null | xargs -r kill 2>/dev/null || true
    done
    for _ in $(seq 150); do
      left=$(for name in "${parts[@]}"; do ip netns pids "bxc-$name" 2>/dev/null; done)
      [ -z "$left" ] && break
      sleep 0.1
    done
    [ -z "$left" ] || xargs -r kill -KILL <<<"$left" 2>/dev/null || true
    remove_network
  fi
  rm -f "$data/mode"
  log "stopped (data kept in $data; rm -rf it to start afresh)"
}

status() {
  load_mode
  [ "$mode" = none ] && { log "no cluster under $data"; return 0; }
  local name state
  printf 'mode: %s\n' "$mode"
  for name in "${parts[@]}"; do
    case $name in
      pg*) state=$("$(pg_bin)/psql" -h "$(host "$name")" -p "$(port "$name")" -U postgres -d postgres -qAtc \
        "SELECT CASE WHEN pg_is_in_recovery() THEN 'replica, replayed to ' || pg_last_wal_replay_lsn() ELSE 'primary at ' || pg_current_wal_lsn() END" 2>/dev/null || echo down) ;;
      bouncer) state=$("$(pg_bin)/psql" "postgres://boxoffice@$(addr bouncer)/boxoffice" -qAtc 'SELECT 1' >/dev/null 2>&1 && echo up || echo down) ;;
      redis*) state=$(redis-cli -h "$(host "$name")" -p "$(port "$name")" role 2>/dev/null | head -n 1 || true); state=${state:-down} ;;
      *) state=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://$(addr "$name")/readyz" 2>/dev/null || true)
         [ "$state" = 200 ] && state=up || state="down ($state)" ;;
    esac
    printf '%-8s %-18s %s\n' "$name" "$(addr "$name")" "$state"
  done
  printf 'shop: http://%s/\n' "$(addr nginx)"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) log "usage: $0 up|down|status"; exit 2 ;;
esac
