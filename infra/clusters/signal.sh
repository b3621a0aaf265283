# Shared by infra/clusters/{nats,kafka}/lib.sh (sourced, not run): sending a signal to one node of
# a cluster. The sourcing lib.sh defines `node_pid N` (the node's pid, or empty) and `say`, and may
# set SIGNAL_WAIT_S (default 10): how long a KILL or TERM waits for the process to go before it
# sends KILL.

# Sends signal $2 to node $1 and, for KILL/TERM, waits until it is gone (TERM: up to
# SIGNAL_WAIT_S, then KILL).
signal_node() {
  local n="$1" sig="$2" pid
  pid="$(node_pid "$n")"
  if [[ -z "$pid" ]]; then
    say "node $n is not running"
    return 0
  fi
  kill "-$sig" "$pid"
  if [[ "$sig" == KILL || "$sig" == TERM ]]; then
    for _ in $(seq 1 $((${SIGNAL_WAIT_S:-10} * 10))); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
    fi
  fi
  say "node $n (pid $pid): SIG$sig sent"
}
