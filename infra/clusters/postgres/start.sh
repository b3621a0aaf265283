#!/usr/bin/env bash
# Starts a PostgreSQL 15 cluster on loopback for tests and development: a primary and a streaming
# standby (initdb, then pg_basebackup -R), and a stable endpoint in front (endpoint.mjs) that
# routes every new connection to the current primary. Idempotent: running parts are left alone,
# stopped ones started (a former primary comes back as a standby of the current one). Waits until
# the standby streams. Prints the URL to use as BATON_STORE_URL as its last line.
# Trust authentication on 127.0.0.1 only: never use it for anything but tests and development.
# Settings: see common.sh (BATON_PG_CLUSTER_DIR, BATON_PG_CLUSTER_SYNC, ports).
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"
NODE_BIN="${BATON_NODE_BIN:-node}"

SYNC="${BATON_PG_CLUSTER_SYNC:-on}"
[[ "$SYNC" == on || "$SYNC" == off ]] || fail "BATON_PG_CLUSTER_SYNC must be on or off, got '$SYNC'"
prepare_dir
echo "$SYNC" >"$SYNC_FILE"

if [[ ! -f "$PRIMARY_FILE" ]]; then
  [[ ! -e "$(node_dir 1)" ]] || fail "$(node_dir 1) exists but $PRIMARY_FILE does not; run stop.sh --purge first"
  say "initdb node 1"
  as_pg "$PG_BIN/initdb" -D "$(node_dir 1)" -U postgres --auth=trust --no-sync >/dev/null || fail "initdb failed"
  write_node_config "$(node_dir 1)"
  echo 1 >"$PRIMARY_FILE"
fi
primary="$(current_primary)"
start_node "$primary"
if [[ -z "$(psql_node "$primary" "SELECT 1 FROM pg_database WHERE datname = 'test'")" ]]; then
  psql_node "$primary" "CREATE DATABASE test" >/dev/null
fi
other=$((3 - primary))
start_node "$other"
# A cluster already running keeps the BATON_PG_CLUSTER_SYNC this start asked for.
apply_sync_setting

# The endpoint: one Node process, its pid in a file.
endpoint_pid=""
[[ -f "$ENDPOINT_PID_FILE" ]] && endpoint_pid="$(tr -dc '0-9' <"$ENDPOINT_PID_FILE")"
if [[ -n "$endpoint_pid" ]] && kill -0 "$endpoint_pid" 2>/dev/null &&
  [[ "$(ps -o args= -p "$endpoint_pid" 2>/dev/null || true)" == *endpoint.mjs* ]]; then
  say "endpoint already runs (pid $endpoint_pid)"
else
  nohup "$NODE_BIN" "$HERE/endpoint.mjs" --port "$ENDPOINT_PORT" --primary-file "$PRIMARY_FILE" \
    --node "1=$HOST:$PORT_1" --node "2=$HOST:$PORT_2" >>"$DIR/endpoint.log" 2>&1 &
  echo $! >"$ENDPOINT_PID_FILE"
  for _ in $(seq 1 40); do
    (exec 3<>"/dev/tcp/$HOST/$ENDPOINT_PORT") 2>/dev/null && break
    sleep 0.25
  done
  (exec 3<>"/dev/tcp/$HOST/$ENDPOINT_PORT") 2>/dev/null || fail "endpoint does not listen on $ENDPOINT_PORT; see $DIR/endpoint.log"
  say "endpoint on $HOST:$ENDPOINT_PORT (pid $(cat "$ENDPOINT_PID_FILE"))"
fi
echo "postgres://postgres@$HOST:$ENDPOINT_PORT/test"
