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
#   BATON_NATS_CLUSTER_NETNS         1: every node in a network namespace of its own  default 0
#
# With BATON_NATS_CLUSTER_NETNS=1 (root, or CAP_NET_ADMIN and CAP_SYS_ADMIN, and iproute2), node n
# runs in the namespace baton-nats-<client port>-n<n>, joined to a bridge bbr<client port> on
# 10.77.<client port % 250>.0/24 (the machine's end .1, node n .1<n>) by a veth pair, and listens
# on its own address instead of 127.0.0.1. `node.sh cut <n>` takes node n's link down: the node
# runs on and keeps its sockets, but no packet reaches it or leaves it (a network partition) until
# `node.sh heal <n>`. stop.sh deletes the namespaces and the bridge.
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
NETNS="${BATON_NATS_CLUSTER_NETNS:-0}"
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

[[ "$NETNS" == 0 || "$NETNS" == 1 ]] || fail "BATON_NATS_CLUSTER_NETNS must be 0 or 1, got '$NETNS'"

# Network namespaces (BATON_NATS_CLUSTER_NETNS=1): names and addresses, all derived from the
# client port so that clusters on other ports never share them.
SUBNET="10.77.$((CLIENT_PORT % 250))"
BRIDGE="bbr$CLIENT_PORT"
netns_name() { echo "baton-nats-$CLIENT_PORT-n$1"; }
veth_name() { echo "bv${CLIENT_PORT}n$1"; }
# The address node $1 listens on.
node_host() {
  if [[ "$NETNS" == 1 ]]; then echo "$SUBNET.1$1"; else echo "$HOST"; fi
}

# Creates the bridge and node $1's namespace and link unless they exist (idempotent).
ensure_node_network() {
  local n="$1" ns veth
  command -v ip >/dev/null 2>&1 || fail "BATON_NATS_CLUSTER_NETNS=1 needs iproute2's ip command"
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge forward_delay 0 ||
      fail "could not create the bridge $BRIDGE (BATON_NATS_CLUSTER_NETNS=1 needs root or CAP_NET_ADMIN)"
    ip addr add "$SUBNET.1/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
  fi
  ns="$(netns_name "$n")"
  veth="$(veth_name "$n")"
  if ! ip netns list | grep -qx "$ns\( .*\)\?"; then
    ip netns add "$ns" || fail "could not create the network namespace $ns (needs root or CAP_SYS_ADMIN)"
  fi
  if ! ip link show "$veth" >/dev/null 2>&1; then
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    ip -n "$ns" addr add "$(node_host "$n")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip link set "$veth" master "$BRIDGE"
  fi
  ip link set "$veth" up
}

# Deletes the namespaces and the bridge (their veth pairs go with them); quiet when absent.
remove_network() {
  local n
  command -v ip >/dev/null 2>&1 || return 0
  for n in "${NODES[@]}"; do ip netns del "$(netns_name "$n")" 2>/dev/null || true; done
  ip link del "$BRIDGE" 2>/dev/null || true
}

# Takes node $1's link down (cut) or up (heal).
set_link() {
  [[ "$NETNS" == 1 ]] || fail "cut and heal need a cluster started with BATON_NATS_CLUSTER_NETNS=1"
  ip link show "$(veth_name "$1")" >/dev/null 2>&1 || fail "node $1 has no network link (is the cluster started?)"
  ip link set "$(veth_name "$1")" "$2"
}

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
  for n in "${NODES[@]}"; do urls+=("nats://$(node_host "$n"):$(client_port "$n")"); done
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
  for m in "${NODES[@]}"; do routes+=("nats://$(node_host "$m"):$(route_port "$m")"); done
  cat >"$dir/nats.conf" <<CONF
# Written by infra/clusters/nats (lib.sh); rewritten at every start.
server_name: n$n
listen: $(node_host "$n"):$(client_port "$n")
http: $(node_host "$n"):$(http_port "$n")
pid_file: "$(pid_file "$n")"
jetstream {
  store_dir: "$dir"
  max_memory_store: $MEMORY_STORE
  max_file_store: $FILE_STORE
}
cluster {
  name: baton-test
  listen: $(node_host "$n"):$(route_port "$n")
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
  local port launch=(setsid)
  if [[ "$NETNS" == 1 ]]; then
    ensure_node_network "$n"
    launch=(ip netns exec "$(netns_name "$n")" setsid)
  fi
  for port in "$(client_port "$n")" "$(route_port "$n")" "$(http_port "$n")"; do
    if (exec 3<>"/dev/tcp/$(node_host "$n")/$port") 2>/dev/null; then
      fail "port $port of node $n is taken by a process this cluster did not start (no live pid in $(pid_file "$n")): a cluster left from another directory? stop it, or choose other ports (BATON_NATS_CLUSTER_*_PORT)"
    fi
  done
  write_config "$n"
  dir="$(node_dir "$n")"
  rm -f "$(pid_file "$n")"
  "${launch[@]}" "$NATS_SERVER" -c "$dir/nats.conf" >>"$dir/nats.log" 2>&1 </dev/null &
  local i
  for i in $(seq 1 100); do
    pid="$(node_pid "$n")"
    [[ -n "$pid" ]] && break
    sleep 0.1
  done
  [[ -n "$pid" ]] || fail "node $n did not start; see $dir/nats.log"
  say "node $n started (pid $pid, client $(node_host "$n"):$(client_port "$n"))"
}

# signal_node N SIG: infra/clusters/signal.sh (a TERM waits up to 10 s before KILL).
SIGNAL_WAIT_S=10
# shellcheck source=../signal.sh
source "$CLUSTER_HERE/../signal.sh"

# The meta (JetStream cluster) leader's name as node $1 sees it, or "" when it knows none.
meta_leader() {
  curl -fsS --max-time 2 "http://$(node_host "$1"):$(http_port "$1")/jsz" 2>/dev/null |
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
