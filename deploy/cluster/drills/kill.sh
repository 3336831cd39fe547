# shellcheck shell=bash disable=SC2154,SC2034 # work, data, lb, slug, event… are drills.sh's
# Kill one instance mid-onsale: viewers reconnect, requests are answered, an
# idempotent hold's retry gets its first answer, no hold is orphaned.

drill_kill() {
  local f="$work/kill.txt" rc watchrc idemrc retryrc c1 c2 wpid cpid pid
  new_event kill
  "$data/bin/drill" watch -url "$lb" -slug "$slug" -event "$event" -db "$primary" -viewers 6 -for 50s >"$work/watch.txt" 2>&1 &
  wpid=$!
  crowd "$lb" "$work/onsale-kill.txt" &
  cpid=$!
  "$data/bin/drill" idem-hold -url http://10.77.0.32:8080 -event 1 -state "$work/idem.json" >"$work/idem.txt" 2>&1; idemrc=$?
  sleep 22 # ten seconds to the onsale, then the sale in full swing
  pid=$(cat "$data/app2.pid")
  kill -9 "$pid"
  echo "app2 (pid $pid) killed with SIGKILL at $(date +%T), 12 s into the sale" >>"$work/idem.txt"
  "$data/bin/drill" idem-retry -url "$lb" -state "$work/idem.json" >>"$work/idem.txt" 2>&1; retryrc=$?
  wait "$cpid"; rc=$?
  wait "$wpid"; watchrc=$?
  check "$event" >"$work/check-kill.txt"; c1=$?
  check 1 >>"$work/check-kill.txt"; c2=$?
  {
    cat "$work/idem.txt" "$work/watch.txt"
    echo "simulator exit $rc (1: an invariant broken or answers outside an onsale's normal ones)"
    figures "$work/onsale-kill.txt"
    echo "requests without an answer (none came, a timeout, or the balancer's 502), after the buyers' one repeat with the same Idempotency-Key: $(unanswered "$work/onsale-kill.txt")"
    cat "$work/check-kill.txt"
  } >"$f"
  local noanswer; noanswer=$(unanswered "$work/onsale-kill.txt")
  record "kill one instance mid-onsale" "$(ok $((watchrc + idemrc + retryrc + c1 + c2 + noanswer)))" \
    "drill watch …; onsale run -url $lb …; drill idem-hold -url app2; kill -9 \$(cat .data/cluster/app2.pid); drill idem-retry -url $lb" "$f"
  ensure_cluster
}

# unanswered FILE: the simulator's errors that are no answer at all (none came, a
# timeout) or the balancer's 502 for an instance gone mid-request, summed. The buyers
# send each hold, add, checkout and pay once more with its key after such a failure
# (cmd/onsale: send); what is counted here failed both times.
unanswered() {
  sed -n '/^errors:/,/^sent again/p' "$1" | awk '/^  [a-z]+: (no answer|timeout|502)/ { n += $NF } END { print n + 0 }'
}
