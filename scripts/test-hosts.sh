#!/usr/bin/env bash
# pnpm test:hosts: the failure test across hosts (test/hosts), alone. Needs root, iproute2,
# rabbitmq-server, PostgreSQL and redis-server (scripts/ci.sh installs them). Whatever happens
# (a failure, Ctrl-C, SIGTERM, a timeout), the namespaces, the bridge, /etc/netns/trawlh* and every
# process in them are removed on the way out; leftovers of a run that was killed are removed first.
set -uo pipefail
cd "$(dirname "$0")/.."
cleanup() { node --import tsx test/hosts/cleanup.ts || echo "[test:hosts] cleanup failed" >&2; }
trap cleanup EXIT
cleanup
# Bounded: the test's own deadlines end it in a few minutes; `timeout` is the backstop and, sent
# SIGTERM, passes it to the whole run. In the background so that a signal to this script is
# handled at once (bash runs a trap only after the foreground command ends).
timeout --kill-after=30 900 node scripts/test.mjs --config test/hosts/vitest.config.ts "$@" &
run=$!
trap 'kill -TERM "$run" 2>/dev/null; wait "$run"; exit 130' INT TERM
wait "$run"
