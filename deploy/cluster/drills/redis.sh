# shellcheck shell=bash disable=SC2154,SC2034 # work, data, lb, slug, event… are drills.sh's
# Lose one Redis master mid-onsale, and cut one instance off from Redis.

cluster_ok() { redis-cli -h "$1" -p 7000 cluster info 2>/dev/null | grep -q cluster_state:ok; }

drill_redis() {
  local f="$work/redis.txt" rc c1 cpid t0 t1 master
  new_event redis
  crowd "$lb" "$work/onsale-redis.txt" &
  cpid=$!
  sleep 20
  master=redis1
  redis-cli -h 10.77.0.21 -p 7000 role | head -n 1 | grep -q master || master=redis2
  t0=$(date +%s%N)
  ip link set "vbx-$master" down
  # Taken over: three masters among the nodes still reachable, and the cluster ok.
  local cut=${master#redis} n masters
  for _ in $(seq 300); do
    masters=0
    for n in 1 2 3 4 5 6; do
      [ "$n" = "$cut" ] && continue
      redis-cli -h "10.77.0.2$n" -p 7000 role 2>/dev/null | head -n 1 | grep -q master && masters=$((masters + 1))
    done
    [ "$masters" -ge 3 ] && cluster_ok 10.77.0.2$((cut % 3 + 1)) && break
    sleep 0.2
  done
  t1=$(date +%s%N)
  wait "$cpid"; rc=$?
  ip link set "vbx-$master" up
  check "$event" >"$work/check-redis.txt"; c1=$?
  local busiest configured
  busiest=$(sed -nE 's/.*busiest 30 s: ([0-9.]+)\/s.*/\1/p' "$work/onsale-redis.txt")
  configured=$(sed -nE 's/.*configured ([0-9.]+)\/s.*/\1/p' "$work/onsale-redis.txt")
  local one; one=$(awk -v b="${busiest:-999}" -v c="${configured:-0}" 'BEGIN { print (b <= c * 1.1) ? 0 : 1 }')
  {
    echo "$master's link cut 10 s into the sale; a replica took over and the cluster said ok again after $(((t1 - t0) / 1000000)) ms"
    echo "one admitter: the busiest 30 s admitted ${busiest:-?}/s against ${configured:-?}/s configured (two admitters would exceed it)"
    echo "simulator exit $rc"
    figures "$work/onsale-redis.txt"
    cat "$work/check-redis.txt"
  } >"$f"
  record "lose a Redis master mid-onsale" "$(ok $((c1 + one)))" "ip link set vbx-$master down (during onsale run -url $lb …)" "$f"
}

# join URL: joins the waiting room of $event with a fresh session; prints the status.
join() {
  local jar; jar=$(mktemp)
  local csrf
  csrf=$(curl -s -c "$jar" -H 'X-Forwarded-For: 10.200.0.7' "$1/api/v1/session" | sed -E 's/.*"csrfToken":"([^"]+)".*/\1/')
  curl -s -o "$work/join-body.txt" -w '%{http_code}' --max-time 10 -b "$jar" -H "X-CSRF-Token: $csrf" \
    -H 'X-Forwarded-For: 10.200.0.7' -X POST "$1/api/v1/events/$event/queue"
  rm -f "$jar"
}

drill_partition() {
  local f="$work/partition.txt" app=http://10.77.0.31:8080 n st hold c1 t0 st2
  new_event cut
  sleep 11
  for n in 21 22 23 24 25 26; do ip -n bxc-app1 route add blackhole "10.77.0.$n/32"; done
  t0=$(date +%s)
  sleep 5
  st=$(join "$app"); echo "join on app1 while it is cut off from Redis: $st $(head -c 200 "$work/join-body.txt")" >"$f"
  "$data/bin/drill" first-hold -url "$app" -event 1 -timeout 20s >>"$f"; hold=$?
  echo "app1's log since the cut, lines naming Redis: $(awk -v t="$t0" 'index($0, "edis")' "$data/app1.log" | tail -n 3 | cut -c1-300)" >>"$f"
  for n in 21 22 23 24 25 26; do ip -n bxc-app1 route del blackhole "10.77.0.$n/32"; done
  t0=$(date +%s%N)
  for _ in $(seq 150); do st2=$(join "$app"); [ "$st2" = 200 ] && break; sleep 0.2; done
  echo "healed: app1's join answered $st2 after $((($(date +%s%N) - t0) / 1000000)) ms" >>"$f"
  check 1 >>"$f"; c1=$?
  local honest=1; case $st in 503) honest=0 ;; esac
  local back=1; [ "$st2" = 200 ] && back=0
  record "cut one instance off from Redis" "$(ok $((honest + hold + back + c1)))" \
    "ip -n bxc-app1 route add blackhole 10.77.0.21/32 (… .26); join and hold on app1; route del" "$f"
}
