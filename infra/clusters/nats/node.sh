#!/usr/bin/env bash
# One node of the cluster start.sh started:
#   node.sh kill <1-3>     SIGKILL it (no clean shutdown: what a crashed host looks like)
#   node.sh start <1-3>    start it again on its own ports and data, and wait for a meta leader
#   node.sh freeze <1-3>   SIGSTOP it: it keeps its sockets but answers nothing (a hung host)
#   node.sh thaw <1-3>     SIGCONT it
#   node.sh cut <1-3>      take its network link down: it runs on, unreachable (a partition);
#                          only for a cluster started with BATON_NATS_CLUSTER_NETNS=1
#   node.sh heal <1-3>     take its link up again
#   node.sh pid <1-3>      print its pid (empty when it is not running)
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$HERE/lib.sh"

usage="usage: infra/clusters/nats/node.sh kill|start|freeze|thaw|cut|heal|pid <1-3>"
[[ $# == 2 ]] || fail "$usage"
check_node "$2"
case "$1" in
  kill) signal_node "$2" KILL ;;
  start)
    start_node "$2"
    wait_for_meta_leader
    ;;
  freeze) signal_node "$2" STOP ;;
  thaw) signal_node "$2" CONT ;;
  cut) set_link "$2" down ;;
  heal) set_link "$2" up ;;
  pid) node_pid "$2" ;;
  *) fail "$usage" ;;
esac
