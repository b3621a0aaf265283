#!/usr/bin/env bash
# node.sh kill|start <1-3>: kill -9 one node, or start it again.
#   1, 2: the data nodes (1 is the primary after a fresh start.sh, 2 its replica). A data node
#         started again joins as a replica of whichever node the sentinels name as the primary.
#   3:    the first sentinel (the other two keep the quorum of 2 while it is down).
# `start` waits until the sentinels agree again.
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
  echo "usage: node.sh kill|start <1-3>  (1, 2: data nodes; 3: the first sentinel)" >&2
  exit 2
}
[ $# -eq 2 ] || usage
action="$1"
node="$2"
case "$node" in 1 | 2) dir="$(node_dir "$node")" ;; 3) dir="$(node_dir s1)" ;; *) usage ;; esac

case "$action" in
  kill)
    if alive "$dir"; then
      kill -KILL "$(cat "$dir/redis.pid")"
      wait_for "node $node to exit" "! alive $dir"
      echo "killed node $node"
    else
      echo "node $node is not running"
    fi
    ;;
  start)
    if [ "$node" = 3 ]; then
      start_sentinel 1 ""
    else
      primary_port="$(sentinel_primary | awk '{ print $2 }')" || true
      if [ -z "$primary_port" ]; then
        echo "no sentinel names a primary; is the cluster running (start.sh)?" >&2
        exit 1
      fi
      if [ "$primary_port" = "${DATA_PORTS[$((node - 1))]}" ]; then
        # The sentinels still name this node: it comes back as the primary (no failover happened).
        start_data_node "$node" ""
      else
        start_data_node "$node" "$primary_port"
      fi
    fi
    wait_for "the sentinels to agree on the primary and the replica to sync" agreed
    echo "started node $node"
    ;;
  *) usage ;;
esac
