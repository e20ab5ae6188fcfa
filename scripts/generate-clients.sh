#!/usr/bin/env bash
# Generate the typed clients from docs/openapi.json into OUT (default crates/adapters/clients):
# OUT/python/retold_client (openapi-python-client), OUT/python/retold_schemas (pydantic models of
# every schema, datamodel-code-generator: the framework adapters' tool arguments) and
# OUT/typescript/schema.d.ts (openapi-typescript), all installed by `cargo xtask clients` (and
# by `cargo xtask ci`).
# `cargo xtask clients` runs this; crates/http/tests/it/clients.rs runs it into a temporary
# directory and fails when the committed clients differ.
#
# The generator cannot express the document's cross-field rules (an `anyOf` beside an object's
# properties: "exactly one of id or name", "what each revise action needs"); the clients are
# generated without them and the service still enforces them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/crates/adapters/clients}
venvs=${RETOLD_CACHE_DIR:-$HOME/.cache/retold}/venvs
generator=${OPENAPI_PYTHON_CLIENT:-$venvs/openapi-python-client/bin/openapi-python-client}
models=${DATAMODEL_CODEGEN:-$venvs/datamodel-code-generator/bin/datamodel-codegen}
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
rm -rf "$out/python/retold_schemas"
mkdir -p "$out/python/retold_schemas"
"$models" --input "$work/openapi.json" --input-file-type openapi --output "$out/python/retold_schemas/__init__.py" \
    --output-model-type pydantic_v2.BaseModel --use-annotated --field-constraints \
    --target-python-version 3.11 --disable-timestamp --formatters black isort > "$work/log" 2>&1 || {
    cat "$work/log" >&2
    exit 1
}
mkdir -p "$out/typescript"
"$typescript" "$root/docs/openapi.json" --output "$out/typescript/schema.d.ts" > "$work/log" 2>&1 || {
    cat "$work/log" >&2
    exit 1
}
