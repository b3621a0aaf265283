#!/usr/bin/env bash
# Starts a 3-node Kafka cluster in KRaft mode on loopback (tests and development only: no auth, no
# TLS), idempotently: running nodes are left alone, stopped ones started. Each node is broker and
# controller at once, with a small heap (BATON_KAFKA_CLUSTER_HEAP). Waits until every node's
# broker is registered, then prints the connection URL (for BATON_TRANSPORT_URL) as its last line.
# Ports and paths: see lib.sh. Stop with stop.sh; kill or restart one node with node.sh.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$HERE/lib.sh"

mkdir -p "$DIR"
kafka_classpath "$LIBS" "$DIR"
format_storage
for n in "${NODES[@]}"; do start_node "$n"; done
wait_for_brokers "$(bootstrap)" "${#NODES[@]}"
cluster_url
