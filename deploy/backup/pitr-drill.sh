#!/usr/bin/env bash
# The backup and point-in-time restore drill, on a PostgreSQL of its own:
#
#   REDIS_URL=redis://… deploy/backup/pitr-drill.sh      (make backup-drill)
#
# 1. A primary with continuous WAL archiving (archive_mode=on, archive_command copying
#    each finished segment into an archive folder), and a base backup of it
#    (pg_basebackup) once the event is created.
# 2. An onsale on it: a boxoffice serving the primary and the simulated crowd
#    (cmd/onsale). In the middle, `pitr mark` reads the orders confirmed so far and then
#    takes the target time T from the database's clock; the crowd keeps buying.
# 3. The restore: the base backup copied into a new data folder, restore_command
#    reading the archive, recovery_target_time = T, recovery.signal; PostgreSQL replays
#    the archived WAL up to T and promotes itself.
# 4. The checks (`pitr check`): every order confirmed before T is there, none confirmed
#    after T is, and the seat invariants hold; the same check run against the source
#    must fail (it holds the orders after T), or the check proves nothing. Then a
#    boxoffice serves the restored database until the refunds under way at T are done,
#    and `pitr settle` checks the money invariants too.
#
# It prints the timings (base backup, restore, recovery) and writes them to
# .data/backup/drill.txt. Everything lives under .data/backup/ (deleted at the next
# run); the PostgreSQL instances (ports PITR_PORT and PITR_PORT+1) and the servers it
# starts are stopped at the end. Redis is the one named by REDIS_URL, under a key
# prefix of the drill's own, which it deletes at the end. Run it as root (PostgreSQL
# runs as the postgres user) or as the user that owns the checkout.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir="$top/.data/backup"
bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
port=${PITR_PORT:-25900}
rport=$((port + 1))
app=${PITR_APP_PORT:-25980}
seats=${PITR_SEATS:-2500}
buyers=${PITR_BUYERS:-400}
mark_after=${PITR_MARK_AFTER:-150} # confirmed orders before T is taken
log() { printf 'backup-drill: %s\n' "$*" >&2; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
: "${REDIS_URL:?REDIS_URL must name a running Redis}"

src="$dir/src" base="$dir/base" restored="$dir/restored" archive="$dir/archive"
src_url="postgres://boxoffice@127.0.0.1:$port/boxoffice?sslmode=disable"
restored_url="postgres://boxoffice@127.0.0.1:$rport/boxoffice?sslmode=disable"
prefix="pitr:$(date +%s):"
pids=()

stop_all() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  pids=()
  for d in "$restored" "$src"; do
    [ -s "$d/postmaster.pid" ] && as_postgres "$bin/pg_ctl" -D "$d" -m fast -w stop >/dev/null 2>&1 || true
  done
  if command -v redis-cli >/dev/null; then
    redis-cli -u "$REDIS_URL" --scan --pattern "$prefix*" 2>/dev/null | xargs -r -n 500 redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
  fi
}
trap stop_all EXIT

# serve PORT URL LOG starts a boxoffice on the database URL in the background.
serve() {
  ADDR="127.0.0.1:$1" METRICS_ADDR="127.0.0.1:$(($1 + 1))" DATABASE_URL="$2" \
    REDIS_PREFIX="$prefix$1:" HOLD_TTL=1m DB_MAX_CONNS=4 LOG_FORMAT=json PROOF_OF_WORK_MAXNUMBER=1000 \
    "$dir/bin/boxoffice" serve >"$3" 2>&1 &
  pids+=($!)
  local pid=$!
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$1/readyz" >/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  tail -20 "$3" >&2; log "boxoffice on :$1 did not come up"; return 1
}

sql() { "$bin/psql" "$1" -qAtX -v ON_ERROR_STOP=1 -c "$2"; }

# --- 1. the primary, its archive, the event and the base backup --------------------
stop_all
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/run" "$archive"
[ "$(id -u)" = 0 ] && chown postgres "$dir" "$dir/run" "$archive"
log "building boxoffice, onsale and pitr"
(cd "$top" && go build -o "$dir/bin/boxoffice" ./cmd/boxoffice && go build -o "$dir/bin/onsale" ./cmd/onsale &&
  go build -o "$dir/bin/pitr" ./deploy/backup/pitr)

as_postgres "$bin/initdb" -D "$src" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
# Each finished WAL segment is copied to the archive, never over one already there.
cat >>"$src/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir/run'
wal_level = replica
archive_mode = on
archive_command = 'test ! -f $archive/%f && cp %p $archive/%f'
max_wal_senders = 3
CONF
as_postgres "$bin/pg_ctl" -D "$src" -l "$dir/src.log" -w start >/dev/null
sql "postgres://postgres@127.0.0.1:$port/postgres" "CREATE ROLE boxoffice LOGIN SUPERUSER"
sql "postgres://postgres@127.0.0.1:$port/postgres" "CREATE DATABASE boxoffice OWNER boxoffice"
DATABASE_URL=$src_url "$dir/bin/boxoffice" migrate >"$dir/migrate.log" 2>&1
slug="pitr-$(date +%s)"
seeded=$(DATABASE_URL=$src_url "$dir/bin/boxoffice" seed-stadium -slug "$slug" -seats "$seats" -standing $((seats / 10)) \
  -onsale-in 20s -slots 150 -rate 30 -token-ttl 2m)
event=$(sed -nE 's/.*event=([0-9]+).*/\1/p' <<<"$seeded")
log "event $event ($slug): $seeded"

t=$(now)
as_postgres "$bin/pg_basebackup" -h 127.0.0.1 -p "$port" -U postgres -D "$base" -X stream -c fast
base_s=$(since "$t")
base_size=$(du -sh "$base" | cut -f1)
log "base backup: ${base_s}s, $base_size"

# --- 2. the onsale, and the target time in its middle -------------------------------
serve "$app" "$src_url" "$dir/serve-src.log"
"$dir/bin/onsale" run -url "http://127.0.0.1:$app" -event "$slug" -db "$src_url" -buyers "$buyers" \
  -max-qty 4 -early-window 15s -burst 10s -duration 2m -settle 30s -conns 64 -progress 10s \
  -json "$dir/onsale.json" >"$dir/onsale.txt" 2>"$dir/onsale.log" &
crowd=$!
pids+=("$crowd")
log "crowd of $buyers running; T comes after $mark_after confirmed orders"
for _ in $(seq 1200); do
  n=$(sql "$src_url" "SELECT count(*) FROM orders WHERE event_id = $event AND status = 'confirmed'")
  [ "$n" -ge "$mark_after" ] && break
  kill -0 "$crowd" 2>/dev/null || { log "the crowd ended before $mark_after orders"; exit 1; }
  sleep 0.25
done
"$dir/bin/pitr" mark -db "$src_url" -event "$event" -out "$dir/mark.json" | tee "$dir/mark.txt" >&2
target=$(sed -nE 's/^target="([^"]+)".*/\1/p' "$dir/mark.txt")
crowd_rc=0
wait "$crowd" || crowd_rc=$?
log "crowd done (exit $crowd_rc): $(grep -m1 -iE 'sold|orders' "$dir/onsale.txt" || true)"
[ "$crowd_rc" = 0 ] || { tail -20 "$dir/onsale.txt" >&2; log "the onsale's own checks failed"; exit 1; }

# The segment holding the last commits is archived once it is switched out.
seg=$(sql "$src_url" "SELECT pg_walfile_name(pg_current_wal_lsn())")
sql "$src_url" "SELECT pg_switch_wal()" >/dev/null
for _ in $(seq 300); do [ -f "$archive/$seg" ] && break; sleep 0.1; done
[ -f "$archive/$seg" ] || { log "segment $seg was not archived"; exit 1; }
log "archive: $(find "$archive" -type f | wc -l) segments, $(du -sh "$archive" | cut -f1)"

# --- 3. the restore to T -------------------------------------------------------------
t=$(now)
as_postgres cp -a "$base" "$restored"
cat >>"$restored/postgresql.conf" <<CONF
port = $rport
archive_mode = off
restore_command = 'cp $archive/%f %p'
recovery_target_time = '$target'
recovery_target_action = 'promote'
CONF
as_postgres touch "$restored/recovery.signal"
restore_s=$(since "$t")
t=$(now)
as_postgres "$bin/pg_ctl" -D "$restored" -l "$dir/restored.log" start >/dev/null
for _ in $(seq 1200); do
  [ "$(sql "postgres://postgres@127.0.0.1:$rport/postgres" "SELECT NOT pg_is_in_recovery()" 2>/dev/null)" = t ] && break
  sleep 0.1
done
recover_s=$(since "$t")
grep -m1 'recovery stopping' "$dir/restored.log" >&2 || { log "recovery did not stop at the target"; exit 1; }
log "restore ${restore_s}s, recovery to T and promotion ${recover_s}s"

# --- 4. the checks ---------------------------------------------------------------------
"$dir/bin/pitr" check -db "$restored_url" -source "$src_url" -mark "$dir/mark.json" | tee "$dir/check.txt" >&2
# The negative control: the source itself, which kept selling after T, must fail it.
if "$dir/bin/pitr" check -db "$src_url" -source "$src_url" -mark "$dir/mark.json" >"$dir/control.txt" 2>&1; then
  log "the check passed on the source itself: it cannot tell a restore to T from no restore"; exit 1
fi
log "negative control: the source fails the check ($(grep -c FAIL "$dir/control.txt") problems)"
serve $((app + 2)) "$restored_url" "$dir/serve-restored.log"
"$dir/bin/pitr" settle -db "$restored_url" -event "$event" | tee "$dir/settle.txt" >&2

summary="base backup ${base_s}s ($base_size) · restore ${restore_s}s · recovery to T and promotion ${recover_s}s"
summary="$summary · T $target: $(sed -nE 's/^target .*[+]00: //p' "$dir/check.txt")"
summary="$summary · $(find "$archive" -type f | wc -l) WAL segments archived"
printf '%s\n' "$summary" | tee "$dir/drill.txt"
