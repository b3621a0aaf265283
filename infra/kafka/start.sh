#!/usr/bin/env bash
# Starts a single-node Apache Kafka broker (KRaft mode, no ZooKeeper, no Docker) on loopback for
# tests and development, and waits until it really answers. Needs Java 11+ and Maven (to resolve
# the broker's jars from Maven Central once). Idempotent: a broker already answering on the port is
# left alone. The broker outlives this script; stop it with infra/kafka/stop.sh.
#
# Environment:
#   BATON_KAFKA_PORT              client (PLAINTEXT) port                 default 9092
#   BATON_KAFKA_CONTROLLER_PORT   KRaft controller port                   default 9093
#   BATON_KAFKA_DIR               classpath, data, logs, pid file         default <repo>/.tmp/kafka
#   BATON_KAFKA_HEAP              JVM heap options                        default "-Xms128m -Xmx512m"
#   BATON_KAFKA_START_TIMEOUT_S   how long to wait for the broker         default 90
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

PORT="${BATON_KAFKA_PORT:-9092}"
CONTROLLER_PORT="${BATON_KAFKA_CONTROLLER_PORT:-9093}"
DIR="${BATON_KAFKA_DIR:-$REPO/.tmp/kafka}"
HEAP="${BATON_KAFKA_HEAP:--Xms128m -Xmx512m}"
TIMEOUT_S="${BATON_KAFKA_START_TIMEOUT_S:-90}"
HOST=127.0.0.1

say() { echo "[kafka] $*"; }
fail() {
  echo "[kafka] error: $*" >&2
  exit 1
}

for spec in "BATON_KAFKA_PORT=$PORT" "BATON_KAFKA_CONTROLLER_PORT=$CONTROLLER_PORT" \
  "BATON_KAFKA_START_TIMEOUT_S=$TIMEOUT_S"; do
  [[ "${spec#*=}" =~ ^[1-9][0-9]*$ ]] || fail "${spec%%=*} must be a positive integer, got '${spec#*=}'"
done
[[ "$PORT" != "$CONTROLLER_PORT" ]] || fail "BATON_KAFKA_PORT and BATON_KAFKA_CONTROLLER_PORT are both $PORT"

# Seconds since the epoch with a fraction when the shell can tell (bash 5), else whole seconds.
now() { if [[ -n "${EPOCHREALTIME:-}" ]]; then echo "${EPOCHREALTIME/,/.}"; else date +%s; fi; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
T0="$(now)"

# True when something accepts TCP connections on 127.0.0.1:$1.
answers() {
  if command -v timeout >/dev/null 2>&1; then
    timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null
  else
    (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
  fi
}

# The pid in the pid file when that process is still a Kafka broker (not a recycled pid), else "".
live_pid() {
  local pid
  [[ -f "$PID_FILE" ]] || return 0
  pid="$(tr -dc '0-9' <"$PID_FILE")"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && [[ "$(ps -o args= -p "$pid" 2>/dev/null || true)" == *kafka.Kafka* ]]; then
    echo "$pid"
  fi
}

# shellcheck source=classpath.sh
source "$HERE/classpath.sh"

# Replaces @KEY@ in a template line by line; the quoted values are taken literally (no sed escaping).
render() { # template output
  local line
  while IFS= read -r line || [[ -n "$line" ]]; do
    line="${line//@PORT@/"$PORT"}"
    line="${line//@CONTROLLER_PORT@/"$CONTROLLER_PORT"}"
    line="${line//@DATA_DIR@/"$DATA_DIR"}"
    printf '%s\n' "$line"
  done <"$1" >"$2"
}

# --- already running? -------------------------------------------------------------------------
if answers "$PORT"; then
  say "a broker already answers on $HOST:$PORT; nothing to do"
  exit 0
fi

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
[[ "$DIR" != *$'\n'* && "$DIR" != *,* ]] || fail "BATON_KAFKA_DIR must not contain a comma or a newline: $DIR"
LIBS="$DIR/libs"
DATA_DIR="$DIR/data"
LOGS_DIR="$DIR/logs"
PID_FILE="$DIR/broker.pid"
OUT_FILE="$DIR/broker.out"
SERVER_LOG="$LOGS_DIR/server.log"

# Two start.sh at once (CI step and test setup) must not start two brokers.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$DIR/start.lock"
  flock -w "$TIMEOUT_S" 9 || fail "another infra/kafka/start.sh holds $DIR/start.lock"
  if answers "$PORT"; then
    say "a broker already answers on $HOST:$PORT; nothing to do"
    exit 0
  fi
fi

STARTED_HERE=0
PID="$(live_pid)"
if [[ -n "$PID" ]]; then
  say "broker pid $PID is already starting; waiting for it"
else
  if [[ -f "$PID_FILE" ]]; then
    say "removing stale pid file $PID_FILE"
    rm -f "$PID_FILE"
  fi

  if answers "$CONTROLLER_PORT"; then
    fail "$HOST:$CONTROLLER_PORT (BATON_KAFKA_CONTROLLER_PORT) is taken by another process; choose a free port"
  fi

  # --- java and the classpath -----------------------------------------------------------------
  kafka_classpath "$LIBS" "$DIR"

  # --- configuration ------------------------------------------------------------------------------
  mkdir -p "$DATA_DIR" "$LOGS_DIR"
  render "$HERE/server.properties" "$DIR/server.properties"
  cp "$HERE/log4j.properties" "$DIR/log4j.properties"
  LOG4J=(-Dlog4j.configuration="file:$DIR/log4j.properties" -Dkafka.logs.dir="$LOGS_DIR")

  # --- storage ------------------------------------------------------------------------------------
  if [[ ! -f "$DATA_DIR/meta.properties" ]]; then
    say "formatting storage… ($DATA_DIR)"
    if [[ ! -s "$DIR/cluster-id" ]]; then
      java -cp "$LIBS/*" "${LOG4J[@]}" kafka.tools.StorageTool random-uuid >"$DIR/format.out" 2>&1 ||
        { cat "$DIR/format.out" >&2; fail "kafka.tools.StorageTool random-uuid failed"; }
      tail -n 1 "$DIR/format.out" | tr -d '[:space:]' >"$DIR/cluster-id"
      [[ -s "$DIR/cluster-id" ]] || fail "kafka.tools.StorageTool random-uuid printed no cluster id"
    fi
    if ! java -cp "$LIBS/*" "${LOG4J[@]}" kafka.tools.StorageTool format \
      -t "$(cat "$DIR/cluster-id")" -c "$DIR/server.properties" >"$DIR/format.out" 2>&1; then
      cat "$DIR/format.out" >&2
      fail "formatting $DATA_DIR failed"
    fi
  fi

  # --- start ----------------------------------------------------------------------------------------
  # Only log lines written from here on count as this start's "Kafka Server started".
  LOG_OFFSET=0
  if [[ -f "$SERVER_LOG" ]]; then LOG_OFFSET="$(wc -c <"$SERVER_LOG" | tr -d ' ')"; fi
  # Small footprint: serial GC, C1 only (no C2 compiler threads), and a heap that stays small.
  # shellcheck disable=SC2086 # BATON_KAFKA_HEAP is a list of options
  JAVA_CMD=(java $HEAP -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError
    -Djava.awt.headless=true "${LOG4J[@]}" -cp "$LIBS/*" kafka.Kafka "$DIR/server.properties")
  # The inner shell writes its own pid, then becomes the JVM (exec keeps the pid). setsid puts the
  # broker in a session of its own, so it survives this script, a closed terminal and the end of a
  # CI step; nohup covers systems without setsid (macOS). 9>&- keeps the start lock out of the JVM.
  LAUNCH='cd "$1" && echo $$ >"$2" && shift 2 && exec "$@"'
  SETSID=()
  if command -v setsid >/dev/null 2>&1; then SETSID=(setsid); fi
  : >"$OUT_FILE"
  rm -f "$PID_FILE"
  ${SETSID[@]+"${SETSID[@]}"} nohup bash -c "$LAUNCH" kafka-launch "$DIR" "$PID_FILE" "${JAVA_CMD[@]}" \
    </dev/null >>"$OUT_FILE" 2>&1 9>&- &
  for _ in $(seq 1 100); do
    [[ -s "$PID_FILE" ]] && break
    sleep 0.05
  done
  PID="$(tr -dc '0-9' <"$PID_FILE" 2>/dev/null || true)"
  [[ -n "$PID" ]] || fail "the broker did not start (no pid in $PID_FILE); see $OUT_FILE"
  STARTED_HERE=1
  say "starting broker pid $PID on $HOST:$PORT (controller $HOST:$CONTROLLER_PORT, data $DATA_DIR)"
fi

# --- wait until it answers ------------------------------------------------------------------------
T_BOOT="$(now)"
DEADLINE=$(($(date +%s) + TIMEOUT_S))

give_up() { # message
  echo "[kafka] error: $1" >&2
  if [[ -s "$SERVER_LOG" ]]; then
    echo "[kafka] last 40 lines of $SERVER_LOG:" >&2
    tail -n 40 "$SERVER_LOG" >&2
  fi
  if [[ -s "$OUT_FILE" ]]; then
    echo "[kafka] last 40 lines of $OUT_FILE:" >&2
    tail -n 40 "$OUT_FILE" >&2
  fi
  # A broker that did not come up in time is stopped, so that the next start begins clean.
  if [[ "$STARTED_HERE" == 1 ]] && kill -0 "$PID" 2>/dev/null; then
    echo "[kafka] stopping pid $PID" >&2
    kill "$PID" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$PID" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$PID" 2>/dev/null || true
  fi
  rm -f "$PID_FILE"
  exit 1
}

alive_or_give_up() {
  kill -0 "$PID" 2>/dev/null || give_up "the broker (pid $PID) exited while starting"
  [[ "$(date +%s)" -le "$DEADLINE" ]] || give_up "the broker did not answer within ${TIMEOUT_S} s (BATON_KAFKA_START_TIMEOUT_S)"
}

started_line() {
  if [[ "$STARTED_HERE" == 1 ]]; then
    tail -c "+$((LOG_OFFSET + 1))" "$SERVER_LOG" 2>/dev/null | grep 'Kafka Server started' >/dev/null
  else
    grep 'Kafka Server started' "$SERVER_LOG" >/dev/null 2>&1
  fi
}

until started_line; do
  alive_or_give_up
  sleep 0.2
done
until answers "$PORT"; do
  alive_or_give_up
  sleep 0.2
done

# A Kafka protocol round trip (kafkajs admin describeCluster), with what is left of the timeout.
# Without Node or kafkajs (not installed yet) the TCP check above has to do.
LEFT_S=$((DEADLINE - $(date +%s)))
[[ "$LEFT_S" -ge 1 ]] || LEFT_S=1
if command -v node >/dev/null 2>&1; then
  set +e
  node "$HERE/wait-ready.mjs" "$HOST:$PORT" "$((LEFT_S * 1000))"
  status=$?
  set -e
  case "$status" in
    0) ;;
    3) say "kafkajs is not installed (npm ci): checked the TCP port only" ;;
    *)
      alive_or_give_up
      give_up "the broker accepts connections but did not answer Kafka requests"
      ;;
  esac
else
  say "node not found: checked the TCP port only"
fi

if [[ "$STARTED_HERE" == 1 ]]; then
  say "started pid $PID on $HOST:$PORT in $(since "$T0") s (broker boot $(since "$T_BOOT") s)"
else
  say "broker pid $PID answers on $HOST:$PORT"
fi
