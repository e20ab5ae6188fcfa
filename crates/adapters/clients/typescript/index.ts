// Retold's typed client: every path, body and answer of docs/openapi.json, checked by the
// TypeScript compiler, over openapi-fetch.
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

export type { components, paths } from "./schema.js";

/** A client for a Retold service at `baseUrl`, sending `key` (a host or admin key). */
export function retoldClient(baseUrl: string, key: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });
}
