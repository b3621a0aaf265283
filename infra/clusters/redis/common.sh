# Shared by start.sh, stop.sh and node.sh: where everything lives and how to reach it.
# Sourced, never run. Every value can be overridden by the environment (tests start a cluster of
# their own on other ports and in another directory).
#
# The cluster: two data nodes (node 1 is the primary at first, node 2 its replica; after a
# failover the roles swap, Sentinel decides) and three sentinels (node 3 is the first sentinel,
# the one node.sh can kill and restart; the other two keep the quorum of 2 meanwhile).

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
CLUSTER_DIR="${BATON_REDIS_CLUSTER_DIR:-$REPO_ROOT/.tmp/clusters/redis}"
MASTER_NAME="${BATON_REDIS_MASTER_NAME:-baton}"
DATA_PORTS=("${BATON_REDIS_NODE1_PORT:-16380}" "${BATON_REDIS_NODE2_PORT:-16381}")
read -r -a SENTINEL_PORTS <<<"$(echo "${BATON_REDIS_SENTINEL_PORTS:-26380,26381,26382}" | tr ',' ' ')"
# Each data node's memory ceiling; noeviction, because an evicted lease or run key is lost data.
MAXMEMORY="${BATON_REDIS_MAXMEMORY:-128mb}"
# How long a primary may be silent before a sentinel calls it down (Sentinel's own default is 30 s).
DOWN_AFTER_MS="${BATON_REDIS_DOWN_AFTER_MS:-2000}"
# How long a waiting time Sentinel gives one failover attempt before another sentinel retries.
FAILOVER_TIMEOUT_MS="${BATON_REDIS_FAILOVER_TIMEOUT_MS:-10000}"
READY_TIMEOUT_S="${BATON_REDIS_READY_TIMEOUT_S:-60}"

if [ "${#SENTINEL_PORTS[@]}" -ne 3 ]; then
  echo "BATON_REDIS_SENTINEL_PORTS must list 3 ports, e.g. 26380,26381,26382" >&2
  exit 2
fi

cli() { redis-cli -h 127.0.0.1 --no-auth-warning "$@" 2>/dev/null; }

# The data node (1 or 2) or sentinel (s1..s3) directory.
node_dir() { echo "$CLUSTER_DIR/$1"; }

# 0 when the process behind a pid file is alive.
# (A zombie counts as dead: a killed daemon's parent is init, which may reap it late.)
alive() {
  local pidfile="$1/redis.pid" pid state
  [ -f "$pidfile" ] || return 1
  pid="$(cat "$pidfile")"
  state="$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# "host port" of the primary as the sentinels that answer see it, or nothing.
sentinel_primary() {
  local port reply
  for port in "${SENTINEL_PORTS[@]}"; do
    reply="$(cli -p "$port" SENTINEL get-master-addr-by-name "$MASTER_NAME" | tr '\n' ' ')"
    if [ -n "$reply" ]; then
      echo "$reply"
      return 0
    fi
  done
  return 1
}

# Starts data node $1 (1 or 2) as a replica of port $2, or as a primary when $2 is empty.
start_data_node() {
  local n="$1" primary_port="$2" port="${DATA_PORTS[$(($1 - 1))]}" dir
  dir="$(node_dir "$n")"
  mkdir -p "$dir"
  alive "$dir" && return 0
  {
    echo "bind 127.0.0.1"
    echo "port $port"
    echo "dir $dir"
    echo "daemonize yes"
    echo "pidfile $dir/redis.pid"
    echo "logfile $dir/redis.log"
    echo "appendonly yes"
    echo "appendfsync everysec"
    echo "save \"\""
    echo "maxmemory $MAXMEMORY"
    echo "maxmemory-policy noeviction"
    echo "replica-announce-ip 127.0.0.1"
    if [ -n "$primary_port" ]; then echo "replicaof 127.0.0.1 $primary_port"; fi
  } >"$dir/redis.conf"
  redis-server "$dir/redis.conf"
  wait_for "data node $n on port $port" "cli -p $port PING | grep -q PONG"
}

# Starts sentinel $1 (1..3). Its config is kept across restarts: Sentinel rewrites it with what
# it learned (the current primary, the other sentinels, the epoch).
start_sentinel() {
  local n="$1" port="${SENTINEL_PORTS[$(($1 - 1))]}" dir primary_port="$2"
  dir="$(node_dir "s$n")"
  mkdir -p "$dir"
  alive "$dir" && return 0
  if [ ! -f "$dir/sentinel.conf" ]; then
    {
      echo "bind 127.0.0.1"
      echo "port $port"
      echo "dir $dir"
      echo "daemonize yes"
      echo "pidfile $dir/redis.pid"
      echo "logfile $dir/sentinel.log"
      echo "sentinel announce-ip 127.0.0.1"
      echo "sentinel monitor $MASTER_NAME 127.0.0.1 $primary_port 2"
      echo "sentinel down-after-milliseconds $MASTER_NAME $DOWN_AFTER_MS"
      echo "sentinel failover-timeout $MASTER_NAME $FAILOVER_TIMEOUT_MS"
      echo "sentinel parallel-syncs $MASTER_NAME 1"
    } >"$dir/sentinel.conf"
  fi
  redis-server "$dir/sentinel.conf" --sentinel
  wait_for "sentinel $n on port $port" "cli -p $port PING | grep -q PONG"
}

# Runs the check $2 every 200 ms until it passes; gives up naming $1 after READY_TIMEOUT_S.
wait_for() {
  local what="$1" check="$2" deadline=$((SECONDS + READY_TIMEOUT_S))
  until eval "$check"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "timed out after ${READY_TIMEOUT_S}s waiting for $what; logs are in $CLUSTER_DIR" >&2
      return 1
    fi
    sleep 0.2
  done
}

# The data node (1 or 2) listening on a port, or nothing.
node_of_port() {
  local i
  for i in 1 2; do
    if [ "${DATA_PORTS[$((i - 1))]}" = "$1" ]; then echo "$i"; fi
  done
}

sentinel_url() {
  local hosts=() port
  for port in "${SENTINEL_PORTS[@]}"; do hosts+=("127.0.0.1:$port"); done
  (IFS=,; echo "redis+sentinel://${hosts[*]}/$MASTER_NAME")
}

# A field of `SENTINEL master <name>` as sentinel port $1 reports it.
sentinel_field() {
  cli -p "$1" SENTINEL master "$MASTER_NAME" | awk -v f="$2" 'prev == f { print; exit } { prev = $0 }'
}

# 0 when every live sentinel names the same primary, that primary answers as a master, each
# sentinel knows the others that run, and every live data node other than the primary is a
# replica of it with its link up.
agreed() {
  local primary="" port reply live_sentinels=0 n dir role
  for n in 1 2 3; do alive "$(node_dir "s$n")" && live_sentinels=$((live_sentinels + 1)); done
  for n in 1 2 3; do
    alive "$(node_dir "s$n")" || continue
    port="${SENTINEL_PORTS[$((n - 1))]}"
    reply="$(cli -p "$port" SENTINEL get-master-addr-by-name "$MASTER_NAME" | tr '\n' ' ')"
    [ -n "$reply" ] || return 1
    if [ -z "$primary" ]; then primary="$reply"; elif [ "$primary" != "$reply" ]; then return 1; fi
    [ "$(sentinel_field "$port" num-other-sentinels)" = "$((live_sentinels - 1))" ] || return 1
    case "$(sentinel_field "$port" flags)" in *down* | *failover*) return 1 ;; esac
  done
  [ -n "$primary" ] || return 1
  local primary_port="${primary#* }"
  primary_port="${primary_port% }"
  cli -p "$primary_port" ROLE | head -1 | grep -qx master || return 1
  for n in 1 2; do
    dir="$(node_dir "$n")"
    port="${DATA_PORTS[$((n - 1))]}"
    [ "$port" = "$primary_port" ] && continue
    alive "$dir" || continue
    role="$(cli -p "$port" INFO replication | tr -d '\r')"
    echo "$role" | grep -q "^master_port:$primary_port$" || return 1
    echo "$role" | grep -q '^master_link_status:up$' || return 1
  done
}
