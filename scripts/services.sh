#!/usr/bin/env bash
# Starts (or checks) the local PostgreSQL, Redis and RabbitMQ this machine provides.
# Usage: scripts/services.sh start|status
set -uo pipefail
cmd=${1:-status}

pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
rabbit_up() { (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null && rabbitmqctl -q status >/dev/null 2>&1; }

wait_for() { # name check seconds
  local i=0
  until "$2"; do
    i=$((i + 1))
    if [ "$i" -ge "$3" ]; then echo "[services] $1 did not come up" >&2; return 1; fi
    sleep 1
  done
}

if [ "$cmd" = start ]; then
  pg_up || { echo "[services] starting PostgreSQL"; pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start; }
  redis_up || { echo "[services] starting Redis"; redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log; }
  rabbit_up || { echo "[services] starting RabbitMQ"; rabbitmq-server -detached >/dev/null 2>&1 || true; }
  wait_for PostgreSQL pg_up 60 && wait_for Redis redis_up 30 && wait_for RabbitMQ rabbit_up 120
  exit $?
fi
pg_up && echo "postgres: up" || echo "postgres: down"
redis_up && echo "redis: up" || echo "redis: down"
rabbit_up && echo "rabbitmq: up" || echo "rabbitmq: down"
