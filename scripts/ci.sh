#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[ci] %s\n' "$*"; }

# 1. pnpm 10 (corepack fails on this registry's unsigned metadata, so use npm).
if ! command -v pnpm >/dev/null 2>&1 || ! pnpm -v 2>/dev/null | grep -q '^10\.'; then
  log "installing pnpm 10"
  npm install -g pnpm@10 >/dev/null 2>&1
fi

# 2. Debian packages some tests need (an IMAP server for the retriever tests).
if ! command -v dovecot >/dev/null 2>&1; then
  log "installing dovecot-imapd"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dovecot-imapd >/dev/null) \
    || log "dovecot could not be installed; IMAP tests will be skipped"
  # The package starts its own daemon on 143 on some images; the tests start their own.
  pkill -x dovecot >/dev/null 2>&1 || true
fi

# 3. Local servers.
bash scripts/services.sh start

# 4. What the tests need on them.
psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='trawl_test'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -c 'CREATE DATABASE trawl_test' >/dev/null
rabbitmqctl list_vhosts 2>/dev/null | grep -qx trawl_test || rabbitmqctl add_vhost trawl_test >/dev/null
rabbitmqctl set_permissions -p trawl_test guest '.*' '.*' '.*' >/dev/null

# 5. Dependencies, exactly as locked.
log "installing dependencies"
pnpm install --frozen-lockfile --reporter=append-only 2>&1 | tail -n 5

# 6. Lint and types first: tsx and vitest strip types without checking them, so a type error would
#    otherwise land green.
log "lint (biome)"
pnpm lint
log "typecheck (tsc)"
pnpm typecheck

# 7. The README's test command.
log "running tests"
pnpm test
