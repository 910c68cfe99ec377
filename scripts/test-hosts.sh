#!/usr/bin/env bash
# pnpm test:hosts: the failure test across hosts (test/hosts), alone. Needs root, iproute2,
# rabbitmq-server, PostgreSQL and redis-server (scripts/ci.sh installs them). Whatever happens
# (a failure, Ctrl-C, a timeout), the namespaces, the bridge, /etc/netns/trawlh* and every process
# in them are removed on the way out; leftovers of a run that was killed are removed first.
set -uo pipefail
cd "$(dirname "$0")/.."
cleanup() { node --import tsx test/hosts/cleanup.ts || echo "[test:hosts] cleanup failed" >&2; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cleanup
# Bounded: the test's own deadlines end it in ~5 minutes; this is the backstop.
timeout --kill-after=30 900 node scripts/test.mjs --config test/hosts/vitest.config.ts "$@"
