#!/usr/bin/env bash
# Stops the cluster start.sh started (SIGTERM, then SIGKILL after 30 s per node). Idempotent.
# `--purge` also deletes its data, configs and logs ($BATON_KAFKA_CLUSTER_DIR), the jars included.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$HERE/lib.sh"

PURGE=0
for arg in "$@"; do
  case "$arg" in
    --purge) PURGE=1 ;;
    *) fail "unknown argument '$arg' (usage: infra/clusters/kafka/stop.sh [--purge])" ;;
  esac
done
# All three at once: a controller quorum that loses two members stalls the last one's shutdown.
for n in "${NODES[@]}"; do
  pid="$(node_pid "$n")"
  [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null || true
done
for n in "${NODES[@]}"; do signal_node "$n" TERM; done
if [[ "$PURGE" == 1 ]]; then
  say "purging $DIR"
  rm -rf "$DIR"
fi
