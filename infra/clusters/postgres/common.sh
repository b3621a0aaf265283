#!/usr/bin/env bash
# Shared by start.sh, stop.sh and node.sh: paths, ports and the per-node steps of the PostgreSQL
# cluster (a primary and a streaming standby on loopback, and the endpoint in front of them).
#
# Invariants the scripts keep:
#   1. `$DIR/primary` names the one node that takes writes (1 or 2); the endpoint routes every new
#      connection there and drops its connections to any other node.
#   2. A node that is not the primary is only ever started as a standby (standby.signal present).
#      A former primary is never started as it was (it may hold commits the new primary never
#      received, and two primaries would split the history): it is cloned again from the primary.
#
# Environment:
#   BATON_PG_CLUSTER_DIR    data, logs, sockets, pid and state files   default <repo>/.tmp/clusters/postgres
#   BATON_PG_CLUSTER_SYNC   on: the primary waits for the standby on commit
#                           (synchronous_standby_names='*'); off: asynchronous standby  default on
#   BATON_PG_BIN            PostgreSQL binaries                          default /usr/lib/postgresql/15/bin
# Ports: node 1 on 15432, node 2 on 15433, the endpoint on 15440 (BATON_PG_CLUSTER_PORT_1,
# BATON_PG_CLUSTER_PORT_2, BATON_PG_CLUSTER_ENDPOINT_PORT).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
DIR="${BATON_PG_CLUSTER_DIR:-$REPO/.tmp/clusters/postgres}"
PG_BIN="${BATON_PG_BIN:-/usr/lib/postgresql/15/bin}"
PORT_1="${BATON_PG_CLUSTER_PORT_1:-15432}"
PORT_2="${BATON_PG_CLUSTER_PORT_2:-15433}"
ENDPOINT_PORT="${BATON_PG_CLUSTER_ENDPOINT_PORT:-15440}"
HOST=127.0.0.1
PRIMARY_FILE="$DIR/primary"
SYNC_FILE="$DIR/sync"
ENDPOINT_PID_FILE="$DIR/endpoint.pid"
SOCKETS="$DIR/sockets"

say() { echo "[pg-cluster] $*"; }
fail() {
  echo "[pg-cluster] error: $*" >&2
  exit 1
}

[[ -x "$PG_BIN/pg_ctl" ]] || fail "no pg_ctl in $PG_BIN; install PostgreSQL 15 or set BATON_PG_BIN"

node_port() { if [[ "$1" == 1 ]]; then echo "$PORT_1"; else echo "$PORT_2"; fi; }
node_dir() { echo "$DIR/node$1"; }
check_node() { [[ "${1:-}" == 1 || "${1:-}" == 2 ]] || fail "node must be 1 or 2, got '${1:-}'"; }
current_primary() { if [[ -f "$PRIMARY_FILE" ]]; then tr -dc '12' <"$PRIMARY_FILE"; fi; }

# PostgreSQL refuses to run as root: run its tools as the postgres user then.
as_pg() {
  if [[ "$(id -u)" == 0 ]]; then
    # From /: the postgres user may not enter the caller's directory (a checkout in a mktemp -d
    # directory is root's alone), and initdb and pg_ctl fail when they cannot return to it.
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

prepare_dir() {
  mkdir -p "$DIR" "$SOCKETS"
  [[ "$(id -u)" == 0 ]] && chown postgres: "$DIR" "$SOCKETS"
  return 0
}

# One statement on node $1 as the superuser, through its private socket; prints the result.
psql_node() {
  as_pg "$PG_BIN/psql" -X -q -t -A -h "$SOCKETS" -p "$(node_port "$1")" -U postgres -d postgres -c "$2"
}

# The postmaster's pid of node $1 when it runs, else "".
node_pid() {
  local pidfile pid
  pidfile="$(node_dir "$1")/postmaster.pid"
  [[ -f "$pidfile" ]] || return 0
  pid="$(head -1 "$pidfile" | tr -dc '0-9')"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

# Settings every node runs with: small memory, WAL streaming, the private socket directory.
write_node_config() {
  local dir="$1"
  cat >>"$dir/postgresql.conf" <<CONF

# --- Baton test cluster (infra/clusters/postgres) ---
listen_addresses = '$HOST'
shared_buffers = 16MB
max_connections = 120
wal_level = replica
max_wal_senders = 5
wal_keep_size = 64MB
hot_standby = on
wal_sender_timeout = 5s
wal_receiver_timeout = 5s
synchronous_commit = on
fsync = on
CONF
}

pg_start() {
  local n="$1" dir
  dir="$(node_dir "$n")"
  as_pg "$PG_BIN/pg_ctl" start -w -t 60 -D "$dir" -l "$DIR/node$n.log" \
    -o "-p $(node_port "$n") -k $SOCKETS" >/dev/null || fail "node $n did not start; see $DIR/node$n.log"
}

# Clones node $1 from the primary as a streaming standby (any old data of it is discarded).
clone_standby() {
  local n="$1" primary dir
  primary="$(current_primary)"
  dir="$(node_dir "$n")"
  [[ -n "$(node_pid "$primary")" ]] || fail "cannot clone node $n: the primary (node $primary) is not running"
  rm -rf "$dir"
  say "cloning node $n from node $primary (pg_basebackup -R)"
  as_pg "$PG_BIN/pg_basebackup" -h "$HOST" -p "$(node_port "$primary")" -U postgres -D "$dir" -R -X stream \
    -c fast --no-sync >/dev/null ||
    fail "pg_basebackup of node $n from node $primary failed"
  # The standby names itself so pg_stat_replication tells the nodes apart.
  sed -i "s/^primary_conninfo = '/primary_conninfo = 'application_name=node$n /" "$dir/postgresql.auto.conf"
}

# Waits until node $1 (a standby) streams from the primary, then applies the sync setting there.
wait_streaming() {
  local n="$1" primary state=""
  primary="$(current_primary)"
  for _ in $(seq 1 120); do
    state="$(psql_node "$primary" "SELECT state FROM pg_stat_replication WHERE application_name = 'node$n'" 2>/dev/null || true)"
    [[ "$state" == streaming ]] && break
    sleep 0.25
  done
  [[ "$state" == streaming ]] || fail "node $n does not stream from node $primary after 30 s; see $DIR/node$n.log"
  apply_sync_setting
  say "node $n streams from node $primary ($(psql_node "$primary" "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'node$n'"))"
}

# On the primary: with sync on, commits wait for a standby's flush (synchronous_standby_names='*').
apply_sync_setting() {
  local primary names=""
  primary="$(current_primary)"
  [[ "$(cat "$SYNC_FILE" 2>/dev/null || echo on)" == on ]] && names='*'
  psql_node "$primary" "ALTER SYSTEM SET synchronous_standby_names = '$names'" >/dev/null
  psql_node "$primary" "SELECT pg_reload_conf()" >/dev/null
}

# Starts node $1 as the rules above say; does nothing when it runs.
start_node() {
  local n="$1" primary dir
  primary="$(current_primary)"
  dir="$(node_dir "$n")"
  if [[ -n "$(node_pid "$n")" ]]; then
    say "node $n already runs (pid $(node_pid "$n"))"
    return 0
  fi
  if [[ "$n" == "$primary" ]]; then
    [[ -f "$dir/PG_VERSION" ]] || fail "node $n is the primary but has no data in $dir; stop.sh --purge and start.sh again"
    # pg_ctl removes a pid file a SIGKILLed postmaster left behind.
    pg_start "$n"
    say "node $n (primary) started on port $(node_port "$n")"
    return 0
  fi
  if [[ ! -f "$dir/standby.signal" ]]; then
    clone_standby "$n"
  fi
  pg_start "$n"
  wait_streaming "$n"
}
