// The typed client against a real `retold serve`: write, search, get, revise, forget and a
// scope violation. Prints one JSON object; crates/http/tests/it/clients.rs asserts on it.
// usage: node dist/test/round_trip.js URL HOST_KEY
import { retoldClient } from "../index.js";

declare const process: { argv: string[] };

const [url, key] = process.argv.slice(2);
const client = retoldClient(url, key);
const principal = { agent_id: "assistant", user_id: "jo" };
const seen: Record<string, unknown> = {};

const written = await client.POST("/v1/memory/write", {
  body: { principal, type: "semantic", content: "Jo's preferred editor is Helix.", scope: "user:jo", source_kind: "user_statement" },
});
if (!written.data) throw new Error(`write failed: ${JSON.stringify(written.error)}`);
const record: string = written.data.record_id;
seen.write = written.data;
const found = await client.POST("/v1/memory/search", { body: { principal, query: "Jo's editor" } });
seen.search = found.data;
const got = await client.POST("/v1/memory/get", { body: { principal, ids: [record] } });
seen.get = got.data;
const revised = await client.POST("/v1/memory/revise", { body: { principal, action: "confirm", id: record } });
seen.revise = revised.response.status;
const forgot = await client.POST("/v1/memory/forget", { body: { principal, id: record, reason: "test" } });
seen.forget = forgot.response.status;
const refused = await client.POST("/v1/memory/write", {
  body: { principal, type: "semantic", content: "Not here.", scope: "project:secret", source_kind: "system" },
});
seen.violation = { status: refused.response.status, body: refused.error };
console.log(JSON.stringify(seen));
