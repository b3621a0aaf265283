#!/usr/bin/env bash
# Stops the broker infra/kafka/start.sh started (the pid in $BATON_KAFKA_DIR/broker.pid): SIGTERM,
# up to 30 s for a clean shutdown, then SIGKILL. Idempotent: with nothing running it says so and
# exits 0. `--purge` also deletes the broker's data (topics, offsets, cluster id); the resolved
# classpath (libs/) is kept, so the next start.sh only formats fresh storage.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
DIR="${BATON_KAFKA_DIR:-$REPO/.tmp/kafka}"
PID_FILE="$DIR/broker.pid"

PURGE=0
for arg in "$@"; do
  case "$arg" in
    --purge) PURGE=1 ;;
    -h | --help)
      echo "usage: infra/kafka/stop.sh [--purge]"
      exit 0
      ;;
    *)
      echo "[kafka] error: unknown argument '$arg' (usage: infra/kafka/stop.sh [--purge])" >&2
      exit 1
      ;;
  esac
done

say() { echo "[kafka] $*"; }

pid=""
[[ -f "$PID_FILE" ]] && pid="$(tr -dc '0-9' <"$PID_FILE")"
if [[ -z "$pid" ]]; then
  say "no broker started by infra/kafka/start.sh is running (no pid file in $DIR)"
elif ! kill -0 "$pid" 2>/dev/null; then
  say "broker pid $pid is not running; removing the stale pid file"
elif [[ "$(ps -o args= -p "$pid" 2>/dev/null || true)" != *kafka.Kafka* ]]; then
  say "pid $pid is not a Kafka broker any more (recycled pid); removing the stale pid file"
else
  say "stopping broker pid $pid…"
  kill -TERM "$pid" 2>/dev/null || true
  stopped=0
  for _ in $(seq 1 60); do
    if ! kill -0 "$pid" 2>/dev/null; then
      stopped=1
      break
    fi
    sleep 0.5
  done
  if [[ "$stopped" == 1 ]]; then
    say "stopped pid $pid"
  else
    say "pid $pid did not stop within 30 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  fi
fi
rm -f "$PID_FILE"

if [[ "$PURGE" == 1 ]]; then
  say "purging $DIR/data and $DIR/cluster-id"
  rm -rf "$DIR/data" "$DIR/cluster-id"
fi
