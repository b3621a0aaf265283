#!/usr/bin/env bash
# Starts a 3-node NATS JetStream cluster on loopback (tests and development only: no auth, no
# TLS), idempotently: running nodes are left alone, stopped ones started. Memory-bounded
# (max_memory_store, max_file_store per node). Waits until the nodes agree on a JetStream meta
# leader, then prints the connection URL (for BATON_TRANSPORT_URL) as its last line. Ports and
# paths: see lib.sh. Stop with stop.sh; kill or restart one node with node.sh.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$HERE/lib.sh"

mkdir -p "$DIR"
for n in "${NODES[@]}"; do start_node "$n"; done
wait_for_meta_leader
cluster_url
