#!/usr/bin/env bash
# Starts a Redis primary, its replica and three sentinels on loopback (see README.md), or the
# parts of them that are not running; waits until the sentinels agree on the primary and the
# replica is in sync; prints the BATON_STORE_URL to use as its last line. Idempotent.
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

mkdir -p "$CLUSTER_DIR"
if [ -f "$(node_dir s1)/sentinel.conf" ] || [ -f "$(node_dir s2)/sentinel.conf" ]; then
  # An existing cluster: the sentinels remember which node is the primary now (a failover may
  # have swapped them), so they start first and the data nodes follow what they say.
  for n in 1 2 3; do start_sentinel "$n" ""; done
  wait_for "a sentinel naming the primary" "sentinel_primary >/dev/null"
  primary_port="$(sentinel_primary | awk '{ print $2 }')"
  primary_node="$(node_of_port "$primary_port")"
  if [ -z "$primary_node" ]; then
    echo "the sentinels name port $primary_port as the primary, which is not a data node of this cluster;" \
      "run stop.sh --purge and start again" >&2
    exit 1
  fi
  other_node=$((3 - primary_node))
  start_data_node "$primary_node" ""
  start_data_node "$other_node" "$primary_port"
else
  start_data_node 1 ""
  start_data_node 2 "${DATA_PORTS[0]}"
  for n in 1 2 3; do start_sentinel "$n" "${DATA_PORTS[0]}"; done
fi
wait_for "the sentinels to agree on the primary and the replica to sync" agreed
sentinel_url
