#!/usr/bin/env bash
# Regenerates the TypeScript for cmd.proto, node.proto and the kubelet's device plugin API
# (deviceplugin/v1beta1/api.proto) into src/gen (committed).
#   ./gen.sh          regenerate in place
#   ./gen.sh --check  regenerate into a temp dir and fail if it differs from src/gen
set -euo pipefail
cd "$(dirname "$0")"
out=src/gen
if [ "${1:-}" = --check ]; then out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi
mkdir -p "$out"
rm -f "$out"/*.ts "$out"/deviceplugin/v1beta1/*.ts
protoc \
  --plugin=protoc-gen-ts_proto=node_modules/.bin/protoc-gen-ts_proto \
  --ts_proto_out="$out" \
  --ts_proto_opt=outputServices=grpc-js,env=node,esModuleInterop=true,importSuffix=.js \
  --ts_proto_opt=forceLong=number,oneof=unions-value,useOptionals=messages,useExactTypes=false \
  --ts_proto_opt=snakeToCamel=true \
  -I . cmd.proto node.proto deviceplugin/v1beta1/api.proto
if [ "${1:-}" = --check ]; then
  if ! diff -ru src/gen "$out" >&2; then
    echo "proto: src/gen is stale; run 'pnpm proto:gen' and commit the result" >&2
    exit 1
  fi
fi
