#!/usr/bin/env bash
# Checks services.sh's choice of ports and its words for a taken port, on a scratch
# copy of the script (its own .data/), without starting or stopping any service:
#
#   bash .ci/services_test.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
listener=
cleanup() {
  [ -n "$listener" ] && kill "$listener" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT
mkdir -p "$scratch/.ci"
cp "$here/services.sh" "$scratch/.ci/services.sh"
fails=0
fail() { printf 'FAIL: %s\n' "$*" >&2; fails=$((fails + 1)); }

# ports [VAR=value…] prints the four ports the script chooses, from a fresh shell.
ports() {
  env -u BOXOFFICE_PG_PORT -u BOXOFFICE_REDIS_PORT -u BOXOFFICE_SMTP_PORT -u BOXOFFICE_MAIL_PORT "$@" \
    bash -c 'source "$1"; choose_ports 2>/dev/null; echo "$pg_port $redis_port $smtp_port $mail_port"' _ "$scratch/.ci/services.sh"
}
expect() { # what got want
  [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

expect "a fresh clone" "$(ports)" "25432 26379 21025 28025"
expect "remembered" "$(grep -c _PORT= "$scratch/.data/ports")" 4
for p in 25432 26379 21025 28025; do [ "$p" -lt 32768 ] || fail "default $p is in the ephemeral range"; done
sed -i 's/BOXOFFICE_REDIS_PORT=.*/BOXOFFICE_REDIS_PORT=27000/' "$scratch/.data/ports"
expect "a remembered port" "$(ports)" "25432 27000 21025 28025"
expect "a variable wins" "$(ports BOXOFFICE_PG_PORT=24000)" "24000 27000 21025 28025"
expect "and is remembered" "$(ports)" "24000 27000 21025 28025"
expect "a bad port" "$(env BOXOFFICE_MAIL_PORT=http bash -c 'source "$1"; choose_ports' _ "$scratch/.ci/services.sh" 2>&1 || true)" \
  "services: port http: want a number from 1 to 65535"

# A .data/ from before .data/ports: its cluster's port, and the old ports for the rest.
rm -rf "$scratch/.data"
mkdir -p "$scratch/.data/pg" "$scratch/.data/redis"
echo 15 >"$scratch/.data/pg/PG_VERSION"
printf "listen_addresses = '127.0.0.1'\nport = 55999\n" >"$scratch/.data/pg/postgresql.conf"
expect "an older .data" "$(ports)" "55999 56379 51025 58025"
expect "an older .data, remembered" "$(sed -n 's/BOXOFFICE_PG_PORT=//p' "$scratch/.data/ports")" 55999

# A taken port is named with who holds it: a listener, then a connection's local port.
python3 - "$scratch/addr" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
open(sys.argv[1], "w").write("%d %d\n" % (s.getsockname()[1], c.getsockname()[1]))
time.sleep(60)
PY
listener=$!
for _ in $(seq 1 50); do [ -s "$scratch/addr" ] && break; sleep 0.1; done
read -r lport cport <"$scratch/addr"
said=$(bash -c 'source "$1"; port_free "$2" Redis BOXOFFICE_REDIS_PORT' _ "$scratch/.ci/services.sh" "$lport" 2>&1 || true)
[[ $said == *"127.0.0.1:$lport: python3 (pid $listener) listens on it"*BOXOFFICE_REDIS_PORT=* ]] || fail "a listener: got '$said'"
said=$(bash -c 'source "$1"; port_free "$2" PostgreSQL BOXOFFICE_PG_PORT' _ "$scratch/.ci/services.sh" "$cport" 2>&1 || true)
[[ $said == *"127.0.0.1:$cport: a connection (ESTAB) of python3 (pid $listener) uses it as its local port"* ]] || fail "a connection: got '$said'"
kill "$listener"
wait "$listener" 2>/dev/null || true
listener=
bash -c 'source "$1"; port_free "$2" Redis BOXOFFICE_REDIS_PORT' _ "$scratch/.ci/services.sh" "$lport" || fail "a free port: refused"

[ "$fails" = 0 ] && echo "services.sh ports: ok"
exit "$fails"
