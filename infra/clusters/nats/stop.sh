#!/usr/bin/env bash
# Stops the cluster start.sh started (SIGTERM, then SIGKILL after 10 s per node), and deletes its
# network namespaces when it has them (BATON_NATS_CLUSTER_NETNS=1). Idempotent.
# `--purge` also deletes its data, configs and logs ($BATON_NATS_CLUSTER_DIR).
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$HERE/lib.sh"

PURGE=0
for arg in "$@"; do
  case "$arg" in
    --purge) PURGE=1 ;;
    *) fail "unknown argument '$arg' (usage: infra/clusters/nats/stop.sh [--purge])" ;;
  esac
done
for n in "${NODES[@]}"; do
  # A frozen node (node.sh freeze) must be continued to act on SIGTERM.
  pid="$(node_pid "$n")"
  [[ -n "$pid" ]] && kill -CONT "$pid" 2>/dev/null || true
  signal_node "$n" TERM
done
# The namespaces and the bridge of a cluster started with BATON_NATS_CLUSTER_NETNS=1.
[[ "$NETNS" == 1 ]] && remove_network
if [[ "$PURGE" == 1 ]]; then
  say "purging $DIR"
  rm -rf "$DIR"
fi
