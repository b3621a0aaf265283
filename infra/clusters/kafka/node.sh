#!/usr/bin/env bash
# One node of the cluster start.sh started:
#   node.sh kill <1-3>     SIGKILL it (no clean shutdown: what a crashed host looks like)
#   node.sh start <1-3>    start it again on its own ports and data, and wait until it registered
#   node.sh pid <1-3>      print its pid (empty when it is not running)
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$HERE/lib.sh"

usage="usage: infra/clusters/kafka/node.sh kill|start|pid <1-3>"
[[ $# == 2 ]] || fail "$usage"
check_node "$2"
case "$1" in
  kill) signal_node "$2" KILL ;;
  start)
    [[ -f "$(node_dir "$2")/data/meta.properties" ]] || fail "node $2 has no storage; run infra/clusters/kafka/start.sh first"
    start_node "$2"
    wait_for_brokers "$HOST:$(broker_port "$2")"
    ;;
  pid) node_pid "$2" ;;
  *) fail "$usage" ;;
esac
