#!/usr/bin/env bash
# Brings up the PostgreSQL and Redis that boxoffice needs, unless DATABASE_URL and
# REDIS_URL already name running ones, and prints the environment to use them:
#
#   eval "$(.ci/services.sh)"        # or: .ci/services.sh test (the same, for make test)
#
# `test` also installs what the tests drive besides the services: nginx (the reference
# caching proxy, deploy/cdn), Chromium (the browser tests, internal/browsertest) and
# PgBouncer (the pooler's tests, dbtest.StartPgBouncer).
# `tools` installs only those and prints nothing on stdout.
#
# It also starts a mail catcher, mailpit (pinned below), unless MAILPIT_URL names one:
# every email sent to MAILPIT_SMTP_URL lands there, readable at MAILPIT_URL (web page
# and JSON API). It is built once from the Go module proxy into .data/bin, the only
# download; at run time it asks nobody for anything.
#
# Data lives under .data/ (git-ignored). Running it again reuses what is there. Debian's
# packages are installed when missing (as root, or through sudo). Everything it says
# goes to stderr; stdout carries only the export lines.
#
# Ports (choose_ports): PostgreSQL 25432, Redis 26379, mailpit's SMTP 21025 and web
# page 28025, all on 127.0.0.1 and below Linux's ephemeral range (32768-60999), where
# another program's outgoing connection can hold a port at any moment. Each can be
# set by BOXOFFICE_PG_PORT, BOXOFFICE_REDIS_PORT, BOXOFFICE_SMTP_PORT and
# BOXOFFICE_MAIL_PORT; the ports in use are remembered in .data/ports, so a later run
# (and `stop`) finds the same services. A .data/ from before .data/ports keeps the
# ports it was made with (its cluster's own, in postgresql.conf).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data="$top/.data"
mailpit_version=v1.33.1 # v1.33.1 builds with our Go; its version check wants the internet: off
log() { printf 'services: %s\n' "$*" >&2; }

# choose_ports sets pg_port, redis_port, smtp_port and mail_port, each from the first
# of: its BOXOFFICE_*_PORT variable, .data/ports, the existing cluster's
# postgresql.conf (PostgreSQL), the ports a .data/ from before .data/ports was made
# with, the default; then it remembers them in .data/ports.
choose_ports() {
  local name value legacy= conf
  local -A known=()
  if [ -f "$data/ports" ]; then
    while IFS='=' read -r name value; do
      [[ $name =~ ^BOXOFFICE_(PG|REDIS|SMTP|MAIL)_PORT$ && $value =~ ^[0-9]+$ ]] && known[$name]=$value
    done <"$data/ports"
  elif [ -d "$data/pg" ] || [ -d "$data/redis" ] || [ -d "$data/mailpit" ]; then
    legacy=1
  fi
  conf="$(pg_root_path)/pg/postgresql.conf"
  if [ -z "${known[BOXOFFICE_PG_PORT]:-}" ] && [ -r "$conf" ]; then
    value=$(sed -nE 's/^[[:space:]]*port[[:space:]]*=[[:space:]]*([0-9]+).*/\1/p' "$conf" | tail -n 1)
    [ -n "$value" ] && known[BOXOFFICE_PG_PORT]=$value
  fi
  pg_port=${BOXOFFICE_PG_PORT:-${known[BOXOFFICE_PG_PORT]:-$([ -n "$legacy" ] && echo 55432 || echo 25432)}}
  redis_port=${BOXOFFICE_REDIS_PORT:-${known[BOXOFFICE_REDIS_PORT]:-$([ -n "$legacy" ] && echo 56379 || echo 26379)}}
  smtp_port=${BOXOFFICE_SMTP_PORT:-${known[BOXOFFICE_SMTP_PORT]:-$([ -n "$legacy" ] && echo 51025 || echo 21025)}}
  mail_port=${BOXOFFICE_MAIL_PORT:-${known[BOXOFFICE_MAIL_PORT]:-$([ -n "$legacy" ] && echo 58025 || echo 28025)}}
  for value in "$pg_port" "$redis_port" "$smtp_port" "$mail_port"; do
    if ! [[ $value =~ ^[0-9]+$ ]] || [ "$value" -lt 1 ] || [ "$value" -gt 65535 ]; then
      log "port $value: want a number from 1 to 65535"; exit 2
    fi
  done
  [ -n "$legacy" ] && log "this .data/ keeps the ports it was made with ($pg_port, $redis_port, $smtp_port, $mail_port); make clean-data moves to the new defaults"
  mkdir -p "$data"
  printf 'BOXOFFICE_PG_PORT=%s\nBOXOFFICE_REDIS_PORT=%s\nBOXOFFICE_SMTP_PORT=%s\nBOXOFFICE_MAIL_PORT=%s\n' \
    "$pg_port" "$redis_port" "$smtp_port" "$mail_port" >"$data/ports.new"
  mv "$data/ports.new" "$data/ports"
}

# port_holder says who holds 127.0.0.1:$1, if ss can tell: a listener, or an outgoing
# connection that took it as its local port (any port in the ephemeral range can be).
port_holder() {
  command -v ss >/dev/null 2>&1 || return 0
  local line
  line=$(ss -Htanp "( sport = :$1 )" 2>/dev/null | grep -v TIME-WAIT | head -n 1) || true
  [ -n "$line" ] || return 0
  local state=${line%% *} who
  who=$(grep -oE 'users:\(\("[^"]+",pid=[0-9]+' <<<"$line" | sed -E 's/users:\(\("([^"]+)",pid=([0-9]+)/\1 (pid \2)/')
  [ -n "$who" ] || who="a program of another user, which ss cannot name"
  if [ "$state" = LISTEN ]; then
    echo "$who listens on it"
  else
    echo "a connection ($state) of $who uses it as its local port"
  fi
}

# port_free succeeds if nothing holds port $1 (named $2, set by variable $3); else it
# says who does and what to do, and fails.
port_free() {
  local holder
  holder=$(port_holder "$1")
  [ -z "$holder" ] && return 0
  log "cannot start $2 on 127.0.0.1:$1: $holder. Free it, or choose another port with $3=… (remembered in .data/ports)"
  return 1
}

# bind_failed explains a service that did not start: the port, who holds it, its log.
bind_failed() {
  local holder
  holder=$(port_holder "$2")
  log "$1 did not start on 127.0.0.1:$2${holder:+: $holder}; see $4 (another port: $3=…)"
  tail -n 20 "$4" >&2 2>/dev/null || true
  exit 1
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else log "need root to run: $*"; exit 1
  fi
}

apt_updated=
apt_install() {
  if [ -z "$apt_updated" ]; then
    log "installing $* from Debian's packages"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# pg_root_path is where pg_root puts the cluster, without making or changing anything.
pg_root_path() {
  local alt
  alt="/var/tmp/boxoffice-$(printf %s "$top" | md5sum | cut -c1-12)"
  if [ ! -s "$data/pg/PG_VERSION" ] && [ -s "$alt/pg/PG_VERSION" ]; then echo "$alt"; else echo "$data"; fi
}

# pg_root is where the cluster, its socket and its log live: .data/ in the work tree,
# unless (as root) the postgres user cannot reach it, e.g. in a checkout under /root;
# then a folder of its own under /var/tmp, named after the work tree.
pg_root() {
  if [ "$(id -u)" != 0 ] || ! id postgres >/dev/null 2>&1; then echo "$data"; return; fi
  mkdir -p "$data"
  chown postgres "$data"
  chmod 755 "$data"
  if runuser -u postgres -- test -w "$data"; then echo "$data"; return; fi
  local alt
  alt="/var/tmp/boxoffice-$(printf %s "$top" | md5sum | cut -c1-12)"
  mkdir -p "$alt"
  chown postgres "$alt"
  echo "$alt"
}

start_postgres() {
  local bin dir user sock
  bin=$(pg_bindir)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    apt_install postgresql postgresql-contrib
    bin=$(pg_bindir)
  fi
  command -v pgbench >/dev/null 2>&1 || [ -x "$bin/pgbench" ] || apt_install postgresql-contrib
  root=$(pg_root)
  dir="$root/pg"
  sock="$root/run"
  mkdir -p "$data" "$sock"
  # PostgreSQL refuses to run as root: as root the cluster belongs to the postgres user.
  run=()
  if [ "$(id -u)" = 0 ]; then
    run=(runuser -u postgres --)
    chown postgres "$sock"
  fi
  if [ ! -s "$dir/PG_VERSION" ]; then
    log "creating a PostgreSQL cluster in $dir"
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    "${run[@]}" "$bin/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$data/initdb.log" 2>&1 \
      || { cat "$data/initdb.log" >&2; exit 1; }
    cat >>"$dir/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$sock'
max_connections = 400
shared_buffers = 512MB
fsync = on
synchronous_commit = on
log_min_messages = warning
shared_preload_libraries = 'pg_stat_statements'
CONF
  fi
  if ! "${run[@]}" "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    port_free "$pg_port" PostgreSQL BOXOFFICE_PG_PORT || exit 1
    log "starting PostgreSQL on 127.0.0.1:$pg_port"
    "${run[@]}" "$bin/pg_ctl" -D "$dir" -l "$root/postgres.log" -w -t 60 -o "-p $pg_port" start >&2 \
      || bind_failed PostgreSQL "$pg_port" BOXOFFICE_PG_PORT "$root/postgres.log"
  fi
  "$bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 >&2 <<SQL
SELECT 'CREATE ROLE boxoffice LOGIN SUPERUSER' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'boxoffice')
\gexec
SELECT 'CREATE DATABASE boxoffice OWNER boxoffice' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'boxoffice')
\gexec
-- Autovacuum looks at each database every 10 s instead of every minute: the seats
-- table of an onsale needs vacuuming that often (migrations/00011_seats_vacuum.sql).
ALTER SYSTEM SET autovacuum_naptime = '10s';
SELECT pg_reload_conf();
SQL
  export PATH="$bin:$PATH"
  DATABASE_URL="postgres://boxoffice@127.0.0.1:$pg_port/boxoffice?sslmode=disable"
}

start_redis() {
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  mkdir -p "$data/redis"
  if ! redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1; then
    port_free "$redis_port" Redis BOXOFFICE_REDIS_PORT || exit 1
    log "starting Redis on 127.0.0.1:$redis_port"
    # No snapshots: a save stalls writes for a second under load, and Redis only mirrors.
    redis-server --daemonize yes --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
      --dir "$data/redis" --pidfile "$data/redis/redis.pid" --logfile "$data/redis/redis.log" >&2
    for _ in $(seq 1 50); do
      redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1 && break
      sleep 0.1
    done
    redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1 \
      || bind_failed Redis "$redis_port" BOXOFFICE_REDIS_PORT "$data/redis/redis.log"
  fi
  REDIS_URL="redis://127.0.0.1:$redis_port/0"
}

# http_ok asks 127.0.0.1:$1 for $2 over plain bash (no curl needed) and succeeds on 200.
http_ok() {
  local line
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
  IFS= read -r -t 2 line <&3 || true
  exec 3>&-
  [[ $line == "HTTP/1."?" 200"* ]]
}

# start_mail runs mailpit on loopback, in its own session so that it outlives the make
# that started it, as PostgreSQL and Redis do. Its mail is kept in memory (gone when it
# stops), at most 20,000 messages.
start_mail() {
  local dir="$data/bin/mailpit-$mailpit_version" run="$data/mailpit"
  if ! http_ok "$mail_port" /livez; then
    if [ ! -x "$dir/mailpit" ]; then
      log "building mailpit $mailpit_version into $dir (once)"
      mkdir -p "$dir"
      GOBIN="$dir" GOFLAGS=-buildvcs=false go install "github.com/axllent/mailpit@$mailpit_version" >&2 \
        || { log "could not build mailpit: is the Go module proxy reachable?"; exit 1; }
    fi
    mkdir -p "$run"
    port_free "$smtp_port" "mailpit's SMTP" BOXOFFICE_SMTP_PORT || exit 1
    port_free "$mail_port" "mailpit's web page" BOXOFFICE_MAIL_PORT || exit 1
    log "starting mailpit: SMTP on 127.0.0.1:$smtp_port, mail readable on http://127.0.0.1:$mail_port"
    setsid "$dir/mailpit" --smtp "127.0.0.1:$smtp_port" --listen "127.0.0.1:$mail_port" \
      --disable-version-check --smtp-disable-rdns --max 20000 --quiet \
      </dev/null >>"$run/mailpit.log" 2>&1 &
    echo $! >"$run/mailpit.pid"
    for _ in $(seq 1 100); do
      http_ok "$mail_port" /livez && break
      sleep 0.1
    done
    http_ok "$mail_port" /livez \
      || bind_failed "mailpit (SMTP on $smtp_port)" "$mail_port" "BOXOFFICE_SMTP_PORT or BOXOFFICE_MAIL_PORT" "$run/mailpit.log"
  fi
  MAILPIT_URL="http://127.0.0.1:$mail_port"
  MAILPIT_SMTP_URL="smtp://127.0.0.1:$smtp_port"
}

# start_tools installs the programs the tests run as children: nginx, which Debian puts
# in /usr/sbin (not on every PATH), Chromium, and PgBouncer (the transaction-pooling
# tests). Installing nginx or pgbouncer may start Debian's own on their usual ports;
# the tests do not use them.
start_tools() {
  local missing=()
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
  [ "${#missing[@]}" = 0 ] || apt_install "${missing[@]}"
}

stop() {
  local bin
  bin=$(pg_bindir)
  local root
  root=$(pg_root)
  if [ -s "$root/pg/PG_VERSION" ]; then
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$bin/pg_ctl" -D "$root/pg" -m fast stop >&2 || true
    else "$bin/pg_ctl" -D "$root/pg" -m fast stop >&2 || true; fi
  fi
  redis-cli -h 127.0.0.1 -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
  local pid
  pid=$(cat "$data/mailpit/mailpit.pid" 2>/dev/null || true)
  # Only the mailpit this script started: a pid may have been reused since.
  if [ -n "$pid" ] && grep -q mailpit "/proc/$pid/cmdline" 2>/dev/null; then kill "$pid" || true; fi
  rm -f "$data/mailpit/mailpit.pid"
}

main() {
  case "${1:-env}" in
    stop) choose_ports; stop; exit 0 ;;
    tools) start_tools; exit 0 ;;
    test) start_tools ;;
    env) ;;
    *) log "usage: $0 [env|test|tools|stop]"; exit 2 ;;
  esac
  choose_ports
  [ -n "${DATABASE_URL:-}" ] || start_postgres
  [ -n "${REDIS_URL:-}" ] || start_redis
  if [ -z "${MAILPIT_URL:-}" ] || [ -z "${MAILPIT_SMTP_URL:-}" ]; then start_mail; fi
  local bin
  bin=$(pg_bindir)
  printf 'export DATABASE_URL=%q\n' "$DATABASE_URL"
  printf 'export REDIS_URL=%q\n' "$REDIS_URL"
  printf 'export MAILPIT_URL=%q\n' "$MAILPIT_URL"
  printf 'export MAILPIT_SMTP_URL=%q\n' "$MAILPIT_SMTP_URL"
  [ -n "$bin" ] && printf 'export PATH=%q\n' "$bin:$PATH"
  exit 0
}

# Sourced (a test of the functions above), it runs nothing.
[[ ${BASH_SOURCE[0]} != "$0" ]] || main "$@"
