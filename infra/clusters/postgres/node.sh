#!/usr/bin/env bash
# One node of the cluster, as a failover test or an operator drives it:
#   node.sh kill <1|2>      SIGKILL the node's postmaster (its backends exit when they notice)
#   node.sh start <1|2>     start it again: the primary as it was, any other node as a standby
#                           (a former primary is cloned again from the current one, never started
#                           with a history the new primary does not have)
#   node.sh promote <1|2>   promote the standby and make it the primary the endpoint routes to,
#                           as Patroni or a cloud would; it runs without a synchronous standby
#                           until another node joins (node.sh start), which restores the setting
#   node.sh status          which node is the primary and which run
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"

action="${1:-}"
n="${2:-}"
case "$action" in
  kill)
    check_node "$n"
    pid="$(node_pid "$n")"
    if [[ -z "$pid" ]]; then
      say "node $n does not run"
    else
      kill -KILL "$pid"
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
      say "node $n killed (postmaster pid $pid)"
    fi
    ;;
  start)
    check_node "$n"
    prepare_dir
    start_node "$n"
    ;;
  promote)
    check_node "$n"
    [[ -n "$(node_pid "$n")" ]] || fail "node $n does not run; nothing to promote"
    [[ "$(current_primary)" != "$n" ]] || fail "node $n is already the primary"
    old="$(current_primary)"
    if [[ -n "$(node_pid "$old")" ]]; then
      fail "node $old (the primary) still runs; kill it first (node.sh kill $old), two primaries would split the history"
    fi
    as_pg "$PG_BIN/pg_ctl" promote -w -t 60 -D "$(node_dir "$n")" >/dev/null || fail "pg_ctl promote of node $n failed"
    # No standby is left to wait for: commits would hang until one joins.
    psql_node "$n" "ALTER SYSTEM SET synchronous_standby_names = ''" >/dev/null
    psql_node "$n" "SELECT pg_reload_conf()" >/dev/null
    echo "$n" >"$PRIMARY_FILE.new"
    mv "$PRIMARY_FILE.new" "$PRIMARY_FILE"
    say "node $n promoted; the endpoint now routes to it"
    ;;
  status)
    echo "primary: node $(current_primary)"
    for m in 1 2; do
      pid="$(node_pid "$m")"
      if [[ -n "$pid" ]]; then echo "node $m: running (pid $pid)"; else echo "node $m: stopped"; fi
    done
    ;;
  *)
    fail "usage: infra/clusters/postgres/node.sh kill|start|promote <1|2> | status"
    ;;
esac
