#!/usr/bin/env bash
# Starts any of the loopback services the integration tests need (PostgreSQL, Redis, NATS with
# JetStream) that is not answering, with this machine's own start commands, then waits until each
# answers. Idempotent: a service that already runs is left alone. Never stops anything.
set -uo pipefail

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() { # name port
  for _ in $(seq 1 60); do
    if answers "$2"; then echo "== $1 answers on 127.0.0.1:$2"; return 0; fi
    sleep 0.5
  done
  echo "!! $1 did not come up on 127.0.0.1:$2" >&2
  return 1
}

status=0
if ! answers 5432; then
  echo "== starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
fi
if ! answers 6379; then
  echo "== starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
fi
if ! answers 4222; then
  echo "== starting NATS"
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log || true
fi
wait_for PostgreSQL 5432 || status=1
wait_for Redis 6379 || status=1
wait_for NATS 4222 || status=1
exit $status
