#!/usr/bin/env bash
# The README's first session against a running `retold serve`: create a host key and a grant,
# write a memory, search it and read why it was returned.
#   RETOLD_URL=http://127.0.0.1:8420 RETOLD_ADMIN_KEY=<admin key> scripts/quickstart-session.sh
set -euo pipefail
: "${RETOLD_URL:=http://127.0.0.1:8420}"
: "${RETOLD_ADMIN_KEY:?set RETOLD_ADMIN_KEY to the admin key retold printed (or was given)}"
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
admin=(-sS --fail-with-body -H "Authorization: Bearer $RETOLD_ADMIN_KEY" -H 'Content-Type: application/json')

echo '# 1. A host key for the research agent (the secret is shown once):'
HOST_KEY=$(curl "${admin[@]}" -X POST "$RETOLD_URL/v1/admin/host-keys" \
  -d '{"name": "quickstart", "agents": ["research-agent"]}' | json 'd["key"]')
echo "created ${HOST_KEY:0:10}…"

echo '# 2. Let the research agent read and write memories about Aditya:'
curl "${admin[@]}" -X POST "$RETOLD_URL/v1/admin/grants" \
  -d '{"agent_id": "research-agent", "scope": "user:aditya", "can_read": true, "can_write": true}'
echo

host=(-sS --fail-with-body -H "Authorization: Bearer $HOST_KEY" -H 'Content-Type: application/json')
principal='"principal": {"agent_id": "research-agent", "user_id": "aditya"}'

echo '# 3. Write a memory:'
curl "${host[@]}" -X POST "$RETOLD_URL/v1/memory/write" -d "{$principal,
  \"type\": \"semantic\", \"content\": \"Aditya prefers concise technical explanations.\",
  \"scope\": \"user:aditya\", \"subject\": {\"name\": \"Aditya\", \"kind\": \"person\"},
  \"attribute\": \"explanation_style\", \"source_kind\": \"system\"}"
echo

echo '# 4. Search it, and read why it came back:'
curl "${host[@]}" -X POST "$RETOLD_URL/v1/memory/search" \
  -d "{$principal, \"query\": \"How should I write answers for Aditya?\"}" \
  | json '"\n".join(r["record"]["content"] + "\n  " + r["explanation"] for r in d["results"])'
