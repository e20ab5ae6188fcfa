#!/usr/bin/env bash
# Generate the typed clients from docs/openapi.json into OUT (default crates/adapters/clients):
# OUT/python/retold_client (openapi-python-client) and OUT/typescript/schema.d.ts
# (openapi-typescript), both installed by `cargo xtask setup`.
# `cargo xtask clients` runs this; crates/http/tests/it/clients.rs runs it into a temporary
# directory and fails when the committed clients differ.
#
# The generator cannot express the document's cross-field rules (an `anyOf` beside an object's
# properties: "exactly one of id or name", "what each revise action needs"); the clients are
# generated without them and the service still enforces them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/crates/adapters/clients}
generator=${OPENAPI_PYTHON_CLIENT:-${RETOLD_CACHE_DIR:-$HOME/.cache/retold}/venvs/openapi-python-client/bin/openapi-python-client}
typescript=$root/crates/adapters/clients/typescript/node_modules/.bin/openapi-typescript
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$root/docs/openapi.json" "$work/openapi.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for schema in doc["components"]["schemas"].values():
    if "anyOf" in schema and "properties" in schema:
        del schema["anyOf"]
json.dump(doc, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
mkdir -p "$out/python"
rm -rf "$out/python/retold_client"
"$generator" generate --path "$work/openapi.json" --output-path "$out/python/retold_client" --meta none > "$work/log" 2>&1 || {
    cat "$work/log" >&2
    exit 1
}
mkdir -p "$out/typescript"
"$typescript" "$root/docs/openapi.json" --output "$out/typescript/schema.d.ts" > "$work/log" 2>&1 || {
    cat "$work/log" >&2
    exit 1
}
