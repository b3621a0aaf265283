# Shared by start.sh, stop.sh and node.sh (sourced, not run): the Kafka cluster's layout, read from
# the environment, and how to configure, start, find and stop one node. Three combined nodes
# (broker and KRaft controller in one JVM): node n (1-3) has node.id n, serves clients on
# BROKER_PORT+n-1 and the controller quorum on CONTROLLER_PORT+n-1, and keeps its config, data,
# logs and pid file under $DIR/n<n>. The broker jars are the ones infra/kafka/start.sh uses
# (infra/kafka/classpath.sh), resolved once into $DIR/libs.
#
# Environment:
#   BATON_KAFKA_CLUSTER_BROKER_PORT      first client port       default 19092 (nodes: 19092-19094)
#   BATON_KAFKA_CLUSTER_CONTROLLER_PORT  first controller port   default 19192 (nodes: 19192-19194)
#   BATON_KAFKA_CLUSTER_DIR              libs, configs, data     default <repo>/.tmp/clusters/kafka
#   BATON_KAFKA_CLUSTER_HEAP             JVM heap of each node   default "-Xms96m -Xmx384m"
#   BATON_KAFKA_CLUSTER_TIMEOUT_S        how long start waits    default 120
set -euo pipefail

CLUSTER_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$CLUSTER_HERE/../../.." && pwd)"
BROKER_PORT="${BATON_KAFKA_CLUSTER_BROKER_PORT:-19092}"
CONTROLLER_PORT="${BATON_KAFKA_CLUSTER_CONTROLLER_PORT:-19192}"
DIR="${BATON_KAFKA_CLUSTER_DIR:-$REPO/.tmp/clusters/kafka}"
HEAP="${BATON_KAFKA_CLUSTER_HEAP:--Xms96m -Xmx384m}"
TIMEOUT_S="${BATON_KAFKA_CLUSTER_TIMEOUT_S:-120}"
HOST=127.0.0.1
NODES=(1 2 3)

say() { echo "[kafka-cluster] $*"; }
fail() {
  echo "[kafka-cluster] error: $*" >&2
  exit 1
}

for spec in "BATON_KAFKA_CLUSTER_BROKER_PORT=$BROKER_PORT" \
  "BATON_KAFKA_CLUSTER_CONTROLLER_PORT=$CONTROLLER_PORT" "BATON_KAFKA_CLUSTER_TIMEOUT_S=$TIMEOUT_S"; do
  [[ "${spec#*=}" =~ ^[1-9][0-9]*$ ]] || fail "${spec%%=*} must be a positive integer, got '${spec#*=}'"
done
[[ "$DIR" != *$'\n'* && "$DIR" != *,* ]] || fail "BATON_KAFKA_CLUSTER_DIR must not contain a comma or a newline: $DIR"

# shellcheck source=../../kafka/classpath.sh
source "$CLUSTER_HERE/../../kafka/classpath.sh"

broker_port() { echo $((BROKER_PORT + $1 - 1)); }
controller_port() { echo $((CONTROLLER_PORT + $1 - 1)); }
node_dir() { echo "$DIR/n$1"; }
pid_file() { echo "$DIR/n$1/kafka.pid"; }
LIBS="$DIR/libs"

check_node() {
  [[ "${1:-}" =~ ^[1-3]$ ]] || fail "node must be 1, 2 or 3, got '${1:-}'"
}

# host:port of every broker, comma-separated.
bootstrap() {
  local hosts=() n
  for n in "${NODES[@]}"; do hosts+=("$HOST:$(broker_port "$n")"); done
  (IFS=,; echo "${hosts[*]}")
}
# The URL clients use (what BATON_TRANSPORT_URL takes).
cluster_url() { echo "kafka://$(bootstrap)"; }

# The pid of node $1 when its pid file names a live Kafka JVM (not a recycled pid), else "".
node_pid() {
  local file pid
  file="$(pid_file "$1")"
  [[ -f "$file" ]] || return 0
  pid="$(tr -dc '0-9' <"$file")"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null &&
    [[ "$(ps -o args= -p "$pid" 2>/dev/null || true)" == *kafka.Kafka* ]]; then
    echo "$pid"
  fi
}

answers() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }

# Writes node $1's server.properties (rewritten at every start; the data directory is kept).
write_config() {
  local n="$1" dir voters=() m
  dir="$(node_dir "$n")"
  mkdir -p "$dir/data" "$dir/logs"
  for m in "${NODES[@]}"; do voters+=("$m@$HOST:$(controller_port "$m")"); done
  cat >"$dir/server.properties" <<CONF
# Written by infra/clusters/kafka (lib.sh); rewritten at every start. Tests and development only.
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$(IFS=,; echo "${voters[*]}")
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://$HOST:$(broker_port "$n"),CONTROLLER://$HOST:$(controller_port "$n")
advertised.listeners=PLAINTEXT://$HOST:$(broker_port "$n")
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data

# Small footprint: three of these share a small machine.
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
num.replica.fetchers=1
log.cleaner.dedupe.buffer.size=16777216
offsets.topic.num.partitions=8
transaction.state.log.num.partitions=8

# Replicated as in production: internal topics on all three nodes, a write needs two copies.
offsets.topic.replication.factor=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
default.replication.factor=3
min.insync.replicas=2
# A replica that missed writes never becomes leader (the default, stated).
unclean.leader.election.enable=false

auto.create.topics.enable=false
num.partitions=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=1000
# A killed broker is fenced by the controllers after this long without a heartbeat (default 9 s).
broker.session.timeout.ms=4000
broker.heartbeat.interval.ms=1000

log.segment.bytes=67108864
log.retention.hours=24
log.retention.bytes=268435456
CONF
  cp "$CLUSTER_HERE/../../kafka/log4j.properties" "$dir/log4j.properties"
}

# Formats every node's storage with one cluster id, once.
format_storage() {
  local n dir
  if [[ ! -s "$DIR/cluster-id" ]]; then
    java -cp "$LIBS/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1 | tr -d '[:space:]' >"$DIR/cluster-id"
    [[ -s "$DIR/cluster-id" ]] || fail "kafka.tools.StorageTool random-uuid printed no cluster id"
  fi
  for n in "${NODES[@]}"; do
    dir="$(node_dir "$n")"
    [[ -f "$dir/data/meta.properties" ]] && continue
    write_config "$n"
    java -cp "$LIBS/*" -Dlog4j.configuration="file:$dir/log4j.properties" -Dkafka.logs.dir="$dir/logs" \
      kafka.tools.StorageTool format -t "$(cat "$DIR/cluster-id")" -c "$dir/server.properties" \
      >"$dir/format.out" 2>&1 || { cat "$dir/format.out" >&2; fail "formatting node $n's storage failed"; }
  done
}

# Starts node $1 unless it runs; it outlives the calling script (setsid, output to its log).
start_node() {
  local n="$1" dir pid port
  pid="$(node_pid "$n")"
  if [[ -n "$pid" ]]; then
    say "node $n already runs (pid $pid)"
    return 0
  fi
  for port in "$(broker_port "$n")" "$(controller_port "$n")"; do
    if answers "$port"; then
      fail "port $port of node $n is taken by a process this cluster did not start (no live pid in $(pid_file "$n")): a cluster left from another directory? stop it, or choose other ports (BATON_KAFKA_CLUSTER_*_PORT)"
    fi
  done
  write_config "$n"
  dir="$(node_dir "$n")"
  rm -f "$(pid_file "$n")"
  # As infra/kafka/start.sh: serial GC, C1 only, a small heap; the inner shell writes its pid and
  # becomes the JVM; setsid detaches it from this script.
  # shellcheck disable=SC2086 # BATON_KAFKA_CLUSTER_HEAP is a list of options
  local java_cmd=(java $HEAP -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError
    -Djava.awt.headless=true -Dlog4j.configuration="file:$dir/log4j.properties" -Dkafka.logs.dir="$dir/logs"
    -cp "$LIBS/*" kafka.Kafka "$dir/server.properties")
  # shellcheck disable=SC2016 # expanded by the inner shell
  setsid nohup bash -c 'echo $$ >"$1" && shift && exec "$@"' kafka-node "$(pid_file "$n")" "${java_cmd[@]}" \
    </dev/null >>"$dir/kafka.out" 2>&1 &
  for _ in $(seq 1 100); do
    pid="$(node_pid "$n")"
    [[ -n "$pid" ]] && break
    sleep 0.1
  done
  [[ -n "$pid" ]] || fail "node $n did not start; see $dir/kafka.out"
  say "node $n started (pid $pid, broker port $(broker_port "$n"), controller port $(controller_port "$n"))"
}

# signal_node N SIG: infra/clusters/signal.sh (a TERM waits up to 30 s before KILL).
SIGNAL_WAIT_S=30
# shellcheck source=../signal.sh
source "$CLUSTER_HERE/../signal.sh"

# Waits until the brokers that run are all registered and answer a metadata request (kafkajs),
# asking through $1 (host:port list; default every broker): node.sh start asks the restarted node
# itself, since the controllers may still list it from before its death. $2, when given, is how
# many must register: start.sh wants every node, since a node just launched may not show as
# running yet (its shell has not become the JVM), and counting only those let a 2-broker cluster
# pass for a 3-broker one.
wait_for_brokers() {
  local via="${1:-$(bootstrap)}" want="${2:-0}" n
  if ((want == 0)); then
    for n in "${NODES[@]}"; do [[ -n "$(node_pid "$n")" ]] && want=$((want + 1)); done
  fi
  ((want > 0)) || fail "no node is running"
  local status=0
  node "$CLUSTER_HERE/../../kafka/wait-ready.mjs" "$via" "$((TIMEOUT_S * 1000))" "$want" || status=$?
  case "$status" in
    0) ;;
    3) fail "kafkajs is not installed (npm ci): cannot check that the brokers registered" ;;
    *) fail "$want brokers did not register within ${TIMEOUT_S} s (BATON_KAFKA_CLUSTER_TIMEOUT_S); see $DIR/n*/logs/server.log and $DIR/n*/kafka.out" ;;
  esac
}
