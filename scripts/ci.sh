#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[ci] %s\n' "$*"; }

# 1. pnpm 10 (corepack fails on this registry's unsigned metadata, so use npm).
if ! command -v pnpm >/dev/null 2>&1 || ! pnpm -v 2>/dev/null | grep -q '^10\.'; then
  log "installing pnpm 10"
  npm install -g pnpm@10 >/dev/null 2>&1
fi

# Tests that need a real component skip on a laptop but fail in CI, naming it
# (test/support/require-component.ts reads CI).
export CI=true

# need_pkg <command> <debian-package>: installs the package when the command is missing; stops CI,
# naming both, when the command still cannot be found (its tests would otherwise be skipped).
apt_updated=0
have_cmd() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }
need_pkg() {
  local cmd=$1 pkg=$2
  have_cmd "$cmd" && return 0
  log "installing $pkg (for $cmd)"
  if [ "$apt_updated" = 0 ]; then
    apt-get update -qq || log "apt-get update failed"
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null || log "apt-get install $pkg failed"
  if ! have_cmd "$cmd"; then
    log "FAILED: '$cmd' not found after installing the Debian package '$pkg'; the tests that need it cannot run"
    exit 1
  fi
}

# 2. Debian packages some tests need (an IMAP server for the retriever tests).
if ! have_cmd dovecot; then
  need_pkg dovecot dovecot-imapd
  # The package starts its own daemon on 143 on some images; the tests start their own.
  pkill -x dovecot >/dev/null 2>&1 || true
fi
# openssl makes the throwaway certificates of the OAuth tests (client assertions, issue 31).
need_pkg openssl openssl

# The detection corpora beside the repository (read in place; the eval and corpus tests need them).
for d in ../shared/corpus ../shared/corpora; do
  [ -d "$d" ] || { log "FAILED: $d is missing; the corpus tests and the detection figures test need it"; exit 1; }
done

# 2b. Debian's chromium for the web console's browser tests (playwright-core drives it; no browser
#     is ever downloaded). CI fails here, naming chromium, when it cannot be had.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if [ ! -x /usr/bin/chromium ]; then
  log "installing chromium"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || log "chromium could not be installed"
fi
if [ ! -x /usr/bin/chromium ]; then
  log "FAIL: chromium is missing (/usr/bin/chromium): the console's browser tests need it"
  exit 1
fi

# 2c. Debian's postfix for the SMTP content filter tests (services/retriever-smtp): they start their
#     own instances (postfix -c <temp dir>) on free loopback ports. No system instance: debconf's
#     "No configuration" writes no main.cf, and the package's own start is stopped at once. CI must
#     run those tests, so a failed install fails CI here, naming postfix.
if [ ! -x /usr/sbin/postfix ]; then
  log "installing postfix"
  echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
  if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postfix >/dev/null); then
    log "FAILED: postfix could not be installed; the SMTP filter tests need it"
    exit 1
  fi
  # Never a system instance on port 25 (an image whose policy let the package start one); a
  # postfix that was there before is someone's mail system and is left alone.
  /usr/sbin/postfix stop >/dev/null 2>&1 || true
fi
[ -x /usr/sbin/postfix ] || { log "FAILED: postfix is missing (/usr/sbin/postfix)"; exit 1; }

# 2d. kubectl for the Kubernetes manifests' test (`kubectl kustomize` renders deploy/kubernetes; the
#     test needs Kustomize 4 or newer and fails, naming it, on an older one), and iproute2 plus
#     RabbitMQ for the failure test across hosts (pnpm test:hosts: network namespaces, one RabbitMQ
#     node per namespace).
need_pkg kubectl kubernetes-client
need_pkg ip iproute2
need_pkg rabbitmq-server rabbitmq-server

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
log "unused code (knip)"
pnpm knip

# 7. The README's test command, then the failure test across hosts (alone: it makes network
#    namespaces and its own RabbitMQ cluster, so it never runs beside the other tests). CI reads the
#    last `N passed, N failed` line: the sum of both runs.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
set +e
log "running tests"
pnpm test 2>&1 | tee "$logs/test.log"
test_rc=${PIPESTATUS[0]}
log "failure test across hosts (pnpm test:hosts)"
pnpm test:hosts 2>&1 | tee "$logs/hosts.log"
hosts_rc=${PIPESTATUS[0]}
set -e
passed=0 failed=0 skipped=0
for f in "$logs/test.log" "$logs/hosts.log"; do
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$f" | tail -n 1)
  if [ -z "$line" ]; then failed=$((failed + 1)); continue; fi
  read -r p f2 s <<<"$(sed -E 's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/' <<<"$line")"
  passed=$((passed + p)); failed=$((failed + f2)); skipped=$((skipped + ${s:-0}))
done
[ "$test_rc" = 0 ] && [ "$hosts_rc" = 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "$passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
[ "$test_rc" = 0 ] && [ "$hosts_rc" = 0 ]
