# Shared by start.sh, stop.sh and node.sh (sourced, not run): the cluster's layout, read from the
# environment, and how to start, find and stop one node. Node n (1-3) listens for clients on
# CLIENT_PORT+n-1, for routes on ROUTE_PORT+n-1 and for monitoring on HTTP_PORT+n-1, and keeps
# its config, JetStream data, log and pid file under $DIR/n<n>.
#
# Environment:
#   BATON_NATS_CLUSTER_CLIENT_PORT   first client port        default 14222 (nodes: 14222-14224)
#   BATON_NATS_CLUSTER_ROUTE_PORT    first cluster route port default 14322
#   BATON_NATS_CLUSTER_HTTP_PORT     first monitoring port    default 14422
#   BATON_NATS_CLUSTER_DIR           configs, data, logs      default <repo>/.tmp/clusters/nats
#   BATON_NATS_CLUSTER_MEMORY_STORE  JetStream max_memory_store per node  default 64MB
#   BATON_NATS_CLUSTER_FILE_STORE    JetStream max_file_store per node    default 1GB
#   BATON_NATS_CLUSTER_TIMEOUT_S     how long start waits for a meta leader default 30
#   BATON_NATS_SERVER_BIN            the nats-server binary   default nats-server on PATH
set -euo pipefail

CLUSTER_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$CLUSTER_HERE/../../.." && pwd)"
CLIENT_PORT="${BATON_NATS_CLUSTER_CLIENT_PORT:-14222}"
ROUTE_PORT="${BATON_NATS_CLUSTER_ROUTE_PORT:-14322}"
HTTP_PORT="${BATON_NATS_CLUSTER_HTTP_PORT:-14422}"
DIR="${BATON_NATS_CLUSTER_DIR:-$REPO/.tmp/clusters/nats}"
MEMORY_STORE="${BATON_NATS_CLUSTER_MEMORY_STORE:-64MB}"
FILE_STORE="${BATON_NATS_CLUSTER_FILE_STORE:-1GB}"
TIMEOUT_S="${BATON_NATS_CLUSTER_TIMEOUT_S:-30}"
NATS_SERVER="${BATON_NATS_SERVER_BIN:-nats-server}"
HOST=127.0.0.1
NODES=(1 2 3)

say() { echo "[nats-cluster] $*"; }
fail() {
  echo "[nats-cluster] error: $*" >&2
  exit 1
}

for spec in "BATON_NATS_CLUSTER_CLIENT_PORT=$CLIENT_PORT" "BATON_NATS_CLUSTER_ROUTE_PORT=$ROUTE_PORT" \
  "BATON_NATS_CLUSTER_HTTP_PORT=$HTTP_PORT" "BATON_NATS_CLUSTER_TIMEOUT_S=$TIMEOUT_S"; do
  [[ "${spec#*=}" =~ ^[1-9][0-9]*$ ]] || fail "${spec%%=*} must be a positive integer, got '${spec#*=}'"
done

client_port() { echo $((CLIENT_PORT + $1 - 1)); }
route_port() { echo $((ROUTE_PORT + $1 - 1)); }
http_port() { echo $((HTTP_PORT + $1 - 1)); }
node_dir() { echo "$DIR/n$1"; }
pid_file() { echo "$DIR/n$1/nats.pid"; }

check_node() {
  [[ "${1:-}" =~ ^[1-3]$ ]] || fail "node must be 1, 2 or 3, got '${1:-}'"
}

# The URL clients use: every node, comma-separated (what BATON_TRANSPORT_URL takes).
cluster_url() {
  local urls=() n
  for n in "${NODES[@]}"; do urls+=("nats://$HOST:$(client_port "$n")"); done
  (IFS=,; echo "${urls[*]}")
}

# The pid of node $1 when its pid file names a live nats-server (not a recycled pid), else "".
node_pid() {
  local file pid
  file="$(pid_file "$1")"
  [[ -f "$file" ]] || return 0
  pid="$(tr -dc '0-9' <"$file")"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null &&
    [[ "$(ps -o args= -p "$pid" 2>/dev/null || true)" == *nats-server* ]]; then
    echo "$pid"
  fi
}

# Writes node $1's configuration. Every node lists every route; a node's own is ignored.
write_config() {
  local n="$1" dir routes=() m
  dir="$(node_dir "$n")"
  mkdir -p "$dir"
  for m in "${NODES[@]}"; do routes+=("nats://$HOST:$(route_port "$m")"); done
  cat >"$dir/nats.conf" <<CONF
# Written by infra/clusters/nats (lib.sh); rewritten at every start.
server_name: n$n
listen: $HOST:$(client_port "$n")
http: $HOST:$(http_port "$n")
pid_file: "$(pid_file "$n")"
jetstream {
  store_dir: "$dir"
  max_memory_store: $MEMORY_STORE
  max_file_store: $FILE_STORE
}
cluster {
  name: baton-test
  listen: $HOST:$(route_port "$n")
  routes: [$(IFS=,; echo "${routes[*]}")]
}
CONF
}

# Starts node $1 unless it runs; it outlives the calling script (setsid, output to its log).
start_node() {
  local n="$1" dir pid
  pid="$(node_pid "$n")"
  if [[ -n "$pid" ]]; then
    say "node $n already runs (pid $pid)"
    return 0
  fi
  command -v "$NATS_SERVER" >/dev/null 2>&1 || fail "$NATS_SERVER not found; install nats-server 2.9+ or set BATON_NATS_SERVER_BIN"
  local port
  for port in "$(client_port "$n")" "$(route_port "$n")" "$(http_port "$n")"; do
    if (exec 3<>"/dev/tcp/$HOST/$port") 2>/dev/null; then
      fail "port $port of node $n is taken by a process this cluster did not start (no live pid in $(pid_file "$n")): a cluster left from another directory? stop it, or choose other ports (BATON_NATS_CLUSTER_*_PORT)"
    fi
  done
  write_config "$n"
  dir="$(node_dir "$n")"
  rm -f "$(pid_file "$n")"
  setsid "$NATS_SERVER" -c "$dir/nats.conf" >>"$dir/nats.log" 2>&1 </dev/null &
  local i
  for i in $(seq 1 100); do
    pid="$(node_pid "$n")"
    [[ -n "$pid" ]] && break
    sleep 0.1
  done
  [[ -n "$pid" ]] || fail "node $n did not start; see $dir/nats.log"
  say "node $n started (pid $pid, client port $(client_port "$n"))"
}

# signal_node N SIG: infra/clusters/signal.sh (a TERM waits up to 10 s before KILL).
SIGNAL_WAIT_S=10
# shellcheck source=../signal.sh
source "$CLUSTER_HERE/../signal.sh"

# The meta (JetStream cluster) leader's name as node $1 sees it, or "" when it knows none.
meta_leader() {
  curl -fsS --max-time 2 "http://$HOST:$(http_port "$1")/jsz" 2>/dev/null |
    tr -d '\n' | sed -n 's/.*"meta_cluster": *{[^}]*"leader": *"\([^"]*\)".*/\1/p'
}

# Waits until every running node agrees on a meta leader; fails after TIMEOUT_S.
wait_for_meta_leader() {
  local deadline=$((SECONDS + TIMEOUT_S)) n leader seen
  while :; do
    seen=""
    for n in "${NODES[@]}"; do
      [[ -n "$(node_pid "$n")" ]] || continue
      leader="$(meta_leader "$n")"
      if [[ -z "$leader" ]]; then
        seen="?"
        break
      fi
      if [[ -n "$seen" && "$seen" != "$leader" ]]; then
        seen="?"
        break
      fi
      seen="$leader"
    done
    if [[ -n "$seen" && "$seen" != "?" ]]; then
      say "JetStream meta leader: $seen"
      return 0
    fi
    ((SECONDS < deadline)) || fail "no JetStream meta leader within ${TIMEOUT_S} s; see $DIR/n*/nats.log"
    sleep 0.25
  done
}
