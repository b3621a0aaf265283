#!/usr/bin/env bash
# Stops every process of the cluster (SIGTERM, then SIGKILL after 10 s). `--purge` also deletes
# its data and configs, so the next start.sh begins afresh with node 1 as the primary. Idempotent.
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

stop_dir() {
  local dir="$1" pid
  alive "$dir" || return 0
  pid="$(cat "$dir/redis.pid")"
  kill -CONT "$pid" 2>/dev/null || true # a node frozen by a test must be able to exit
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
}

for name in s1 s2 s3 1 2; do stop_dir "$(node_dir "$name")"; done
if [ "${1:-}" = "--purge" ]; then rm -rf "$CLUSTER_DIR"; fi
echo "stopped the Redis cluster in $CLUSTER_DIR"
