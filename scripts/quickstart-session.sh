#!/usr/bin/env bash
# The README's first session against a running `retold serve`, with no model key: a
# conversation recorded through the sessions API becomes searchable memory (turn memory);
# then an agent writes a memory of its own, and a search explains why each result came back.
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

host=(-sS --fail-with-body -H "Authorization: Bearer $HOST_KEY" -H 'Content-Type: application/json')
principal='"principal": {"agent_id": "research-agent", "user_id": "aditya"}'

echo '# 2. A conversation: start a session, append its turns, end it:'
SESSION=$(curl "${host[@]}" -X POST "$RETOLD_URL/v1/sessions" -d "{$principal}" | json 'd["id"]')
curl "${host[@]}" -X POST "$RETOLD_URL/v1/sessions/$SESSION/turns" -d "{$principal, \"role\": \"user\",
  \"content\": \"My cat Biscuit is allergic to chicken, so I buy salmon kibble.\"}"
echo
curl "${host[@]}" -X POST "$RETOLD_URL/v1/sessions/$SESSION/turns" -d "{$principal, \"role\": \"assistant\",
  \"content\": \"Noted: no chicken for Biscuit.\"}"
echo
curl "${host[@]}" -X POST "$RETOLD_URL/v1/sessions/$SESSION/end" -d "{$principal}"

echo '# 3. Later (any session): what the user said is memory, found by what it means:'
curl "${host[@]}" -X POST "$RETOLD_URL/v1/memory/search" \
  -d "{$principal, \"query\": \"What is my cat allergic to?\"}" \
  | json '"\n".join(r["record"]["content"] + "\n  " + r["explanation"] for r in d["results"][:1])'

echo '# 4. Let the research agent read and write memories about Aditya (admin key):'
curl "${admin[@]}" -X POST "$RETOLD_URL/v1/admin/grants" \
  -d '{"agent_id": "research-agent", "scope": "user:aditya", "can_read": true, "can_write": true}'
echo

echo '# 5. The agent writes a memory of its own:'
curl "${host[@]}" -X POST "$RETOLD_URL/v1/memory/write" -d "{$principal,
  \"type\": \"semantic\", \"content\": \"Aditya prefers concise technical explanations.\",
  \"scope\": \"user:aditya\", \"subject\": {\"name\": \"Aditya\", \"kind\": \"person\"},
  \"attribute\": \"explanation_style\", \"source_kind\": \"system\"}"
echo

echo '# 6. Search it, and read why it came back:'
curl "${host[@]}" -X POST "$RETOLD_URL/v1/memory/search" \
  -d "{$principal, \"query\": \"How should I write answers for Aditya?\"}" \
  | json '"\n".join(r["record"]["content"] + "\n  " + r["explanation"] for r in d["results"])'
