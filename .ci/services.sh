#!/usr/bin/env bash
# Brings up the PostgreSQL and Redis that boxoffice needs, unless DATABASE_URL and
# REDIS_URL already name running ones, and prints the environment to use them:
#
#   eval "$(.ci/services.sh)"        # or: .ci/services.sh test (the same, for make test)
#
# `test` also installs what the tests drive besides the services: nginx (the reference
# caching proxy, deploy/cdn) and Chromium (the browser tests, internal/browsertest).
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
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
data="$top/.data"
pg_port=${BOXOFFICE_PG_PORT:-55432}
redis_port=${BOXOFFICE_REDIS_PORT:-56379}
smtp_port=${BOXOFFICE_SMTP_PORT:-51025}
mail_port=${BOXOFFICE_MAIL_PORT:-58025}
mailpit_version=v1.33.1 # v1.33.1 builds with our Go; its version check wants the internet: off
log() { printf 'services: %s\n' "$*" >&2; }

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
    log "starting PostgreSQL on 127.0.0.1:$pg_port"
    "${run[@]}" "$bin/pg_ctl" -D "$dir" -l "$root/postgres.log" -w -t 60 start >&2
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
    log "starting Redis on 127.0.0.1:$redis_port"
    # No snapshots: a save stalls writes for a second under load, and Redis only mirrors.
    redis-server --daemonize yes --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
      --dir "$data/redis" --pidfile "$data/redis/redis.pid" --logfile "$data/redis/redis.log" >&2
    for _ in $(seq 1 50); do
      redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1 && break
      sleep 0.1
    done
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
    log "starting mailpit: SMTP on 127.0.0.1:$smtp_port, mail readable on http://127.0.0.1:$mail_port"
    setsid "$dir/mailpit" --smtp "127.0.0.1:$smtp_port" --listen "127.0.0.1:$mail_port" \
      --disable-version-check --smtp-disable-rdns --max 20000 --quiet \
      </dev/null >>"$run/mailpit.log" 2>&1 &
    echo $! >"$run/mailpit.pid"
    for _ in $(seq 1 100); do
      http_ok "$mail_port" /livez && break
      sleep 0.1
    done
    http_ok "$mail_port" /livez || { log "mailpit did not start: see $run/mailpit.log"; tail -n 20 "$run/mailpit.log" >&2; exit 1; }
  fi
  MAILPIT_URL="http://127.0.0.1:$mail_port"
  MAILPIT_SMTP_URL="smtp://127.0.0.1:$smtp_port"
}

# start_tools installs the programs the tests run as children: nginx, which Debian puts
# in /usr/sbin (not on every PATH), and Chromium. Installing nginx may start Debian's
# own nginx on port 80; the tests do not use it.
start_tools() {
  local missing=()
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
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

case "${1:-env}" in
  stop) stop; exit 0 ;;
  tools) start_tools; exit 0 ;;
  test) start_tools ;;
  env) ;;
  *) log "usage: $0 [env|test|tools|stop]"; exit 2 ;;
esac

[ -n "${DATABASE_URL:-}" ] || start_postgres
[ -n "${REDIS_URL:-}" ] || start_redis
if [ -z "${MAILPIT_URL:-}" ] || [ -z "${MAILPIT_SMTP_URL:-}" ]; then start_mail; fi
bin=$(pg_bindir)
printf 'export DATABASE_URL=%q\n' "$DATABASE_URL"
printf 'export REDIS_URL=%q\n' "$REDIS_URL"
printf 'export MAILPIT_URL=%q\n' "$MAILPIT_URL"
printf 'export MAILPIT_SMTP_URL=%q\n' "$MAILPIT_SMTP_URL"
[ -n "$bin" ] && printf 'export PATH=%q\n' "$bin:$PATH"
exit 0
