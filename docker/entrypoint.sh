#!/bin/sh
# Starts one Trawl service: the first argument, else $TRAWL_SERVICE (the image's SERVICE build arg).
set -eu
service="${1:-${TRAWL_SERVICE:-api-gateway}}"
[ "$#" -gt 0 ] && shift
case "$service" in
  api-gateway|analyzer-orchestrator|mail-orchestrator|analyzers|retriever-imap|all-in-one)
    export TRAWL_SERVICE="$service"
    exec tsx "services/$service/src/main.ts" "$@" ;;
  migrate)
    exec tsx packages/platform/src/bin/migrate.ts "$@" ;;
  trawl)
    exec tsx packages/cli/src/main.ts "$@" ;;
  *)
    echo "unknown service: $service (api-gateway, analyzer-orchestrator, mail-orchestrator, analyzers, retriever-imap, all-in-one, migrate, trawl)" >&2
    exit 2 ;;
esac
