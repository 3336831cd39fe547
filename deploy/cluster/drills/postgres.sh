# shellcheck shell=bash disable=SC2154,SC2034 # work, data, lb, slug, event… are drills.sh's
# Stop the replica; fail the primary over to it.

drill_replica() {
  local f="$work/replica.txt" t0 t1 bad=0 n=0 logged code
  t0=$(date +%s%N)
  local before; before=$(cat "$data"/app?.log | grep -c 'go to the primary' || true)
  ip netns exec bxc-pg2 runuser -u postgres -- "$pgbin/pg_ctl" -D "$data/pg2" -m fast stop >/dev/null
  t1=
  for _ in $(seq 50); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$lb/events/demo-night")
    n=$((n + 1)); [ "$code" = 200 ] || bad=$((bad + 1))
    logged=$(cat "$data"/app?.log | grep -c 'go to the primary' || true)
    [ -z "$t1" ] && [ "$logged" -ge $((before + 3)) ] && t1=$(date +%s%N)
    sleep 0.1
  done
  t1=${t1:-$(date +%s%N)}
  {
    echo "replica stopped; all three instances logged 'go to the primary' within $(((t1 - t0) / 1000000)) ms ($((logged - before)) lines)"
    echo "event page through the balancer meanwhile: $n requests, $bad not 200"
  } >"$f"
  ip netns exec bxc-pg2 runuser -u postgres -- "$pgbin/pg_ctl" -D "$data/pg2" -l "$data/pg2.log" -w \
    -o "-h 10.77.0.12 -p 5432 -k $data/run/pg2" start >/dev/null
  record "stop the replica" "$(ok $(( (logged >= before + 3 ? 0 : 1) + bad )))" \
    "pg_ctl -D .data/cluster/pg2 -m fast stop (in bxc-pg2)" "$f"
}

drill_failover() {
  local f="$work/failover.txt" rc c1 c2 cpid stopped hold
  new_event fail
  crowd "$lb" "$work/onsale-failover.txt" &
  cpid=$!
  sleep 20
  stopped=$("$top/deploy/cluster/failover.sh" 2>"$work/failover-log.txt" | sed -n 's/^stopped=//p')
  "$data/bin/drill" first-hold -url "$lb" -event 1 -since "${stopped:-0}" -timeout 90s >"$f"; hold=$?
  wait "$cpid"; rc=$?
  primary='postgres://boxoffice@10.77.0.12:5432/boxoffice?sslmode=disable'
  check "$event" >"$work/check-failover.txt"; c1=$?
  check 1 >>"$work/check-failover.txt"; c2=$?
  {
    cat "$work/failover-log.txt"
    echo "simulator exit $rc"
    figures "$work/onsale-failover.txt"
    cat "$work/check-failover.txt"
  } >>"$f"
  record "PostgreSQL primary failover" "$(ok $((hold + c1 + c2)))" \
    "deploy/cluster/failover.sh (10 s into onsale run -url $lb …); drill first-hold -url $lb -since <stop>" "$f"
}
