# shellcheck shell=bash disable=SC2154,SC2034 # work, data, lb, slug, event… are drills.sh's
# The onsale through the balancer, and the same onsale against one instance directly.

drill_balancer() {
  local rc1 rc2 c1 c2 f="$work/balancer.txt"
  new_event bal; crowd "$lb" "$work/onsale-lb.txt"; rc1=$?; check "$event" >"$work/check-lb.txt"; c1=$?
  local ev1=$event
  new_event one; crowd http://10.77.0.31:8080 "$work/onsale-one.txt"; rc2=$?; check "$event" >"$work/check-one.txt"; c2=$?
  {
    echo "through the balancer (three instances), event $ev1: simulator exit $rc1"
    figures "$work/onsale-lb.txt"; cat "$work/check-lb.txt"
    echo; echo "one instance directly (app1), event $event: simulator exit $rc2"
    figures "$work/onsale-one.txt"; cat "$work/check-one.txt"
  } >"$f"
  record "onsale through the balancer, next to one instance" "$(ok $((rc1 + c1 + rc2 + c2)))" \
    "onsale run -url $lb -event <slug> -buyers $BUYERS -db <primary> …   # then -url http://10.77.0.31:8080" "$f"
}
