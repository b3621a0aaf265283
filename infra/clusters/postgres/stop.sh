#!/usr/bin/env bash
# Stops what start.sh started: the endpoint, then both nodes (pg_ctl stop -m immediate: test data
# only). Idempotent. `--purge` also deletes the cluster's data and state files.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"

PURGE=0
for arg in "$@"; do
  case "$arg" in
    --purge) PURGE=1 ;;
    *) fail "unknown argument '$arg' (usage: infra/clusters/postgres/stop.sh [--purge])" ;;
  esac
done

if [[ -f "$ENDPOINT_PID_FILE" ]]; then
  pid="$(tr -dc '0-9' <"$ENDPOINT_PID_FILE")"
  if [[ -n "$pid" ]] && [[ "$(ps -o args= -p "$pid" 2>/dev/null || true)" == *endpoint.mjs* ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    say "endpoint pid $pid stopped"
  fi
  rm -f "$ENDPOINT_PID_FILE"
fi
for n in 1 2; do
  if [[ -n "$(node_pid "$n")" ]]; then
    as_pg "$PG_BIN/pg_ctl" stop -w -t 30 -m immediate -D "$(node_dir "$n")" >/dev/null || true
    say "node $n stopped"
  fi
done
if [[ "$PURGE" == 1 ]]; then
  rm -rf "$DIR"
  say "purged $DIR"
fi
