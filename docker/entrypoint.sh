#!/bin/sh
# Starts one Trawl service: the first argument, else $TRAWL_SERVICE (the image's SERVICE build arg).
set -eu
# node --import <tsx loader>, not the tsx CLI: the CLI relays SIGTERM to its child and SIGKILLs it when
# the child's event loop does not answer within ~60 ms (a busy orchestrator), which would skip the
# graceful shutdown. One process, so SIGTERM reaches our own handler.
TSX_LOADER="${TSX_LOADER:-file:///usr/local/lib/node_modules/tsx/dist/loader.mjs}"
service="${1:-${TRAWL_SERVICE:-api-gateway}}"
[ "$#" -gt 0 ] && shift
case "$service" in
  api-gateway|analyzer-orchestrator|mail-orchestrator|analyzers|retriever-imap|retriever-smtp|retriever-graph|retriever-gmail|all-in-one)
    export TRAWL_SERVICE="$service"
    exec node --import "$TSX_LOADER" "services/$service/src/main.ts" "$@" ;;
  migrate)
    exec node --import "$TSX_LOADER" packages/platform/src/bin/migrate.ts "$@" ;;
  trawl)
    exec node --import "$TSX_LOADER" packages/cli/src/main.ts "$@" ;;
  *)
    echo "unknown service: $service (api-gateway, analyzer-orchestrator, mail-orchestrator, analyzers, retriever-imap, retriever-smtp, retriever-graph, retriever-gmail, all-in-one, migrate, trawl)" >&2
    exit 2 ;;
esac
