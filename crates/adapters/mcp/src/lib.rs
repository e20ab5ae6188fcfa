//! The Model Context Protocol door: the five memory tools (`memory_search`, `memory_get`,
//! `memory_write`, `memory_revise`, `memory_forget`) over MCP's streamable HTTP transport,
//! mounted at `/mcp` on `retold serve`, and over stdio (`retold mcp`, one principal).
//!
//! A tool call becomes the REST request of the same name, sent in process to the REST router
//! with the caller's own host key, so authentication, validation, scopes and error codes are
//! REST's, exactly: a key can never widen itself here either. The principal comes from
//! headers (`X-Retold-Agent-Id`, `X-Retold-User-Id`, optional `X-Retold-Project-Id` and
//! `X-Retold-Session-Id`). Input schemas are the REST bodies' schemas from the OpenAPI
//! document, without `principal`. Results are structured content (the REST answer) plus a
//! short text rendering; a refused call is a tool error carrying the stable error code.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, request::Parts};
use http_body_util::BodyExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerInfo, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tower::ServiceExt;

/// (tool, REST path, request schema in the OpenAPI document, description).
const TOOLS: [(&str, &str, &str, &str); 5] = [
    (
        "memory_search",
        "/v1/memory/search",
        "SearchBody",
        "Search the user's long-term memory. Returns current records the caller may read, best first, each with an \
         explanation of why it matched (dense, lexical and entity channels). Use a natural-language query; filter by \
         types or event time when the question asks for them.",
    ),
    (
        "memory_get",
        "/v1/memory/get",
        "GetBody",
        "Read records by id (from a search) with their links, conflicts and version history.",
    ),
    (
        "memory_write",
        "/v1/memory/write",
        "WriteBody",
        "Store a fact, preference, decision, event or procedure in a scope the caller may write. Give the source kind \
         honestly (user_statement only for what the user said, with its evidence); a current fact names its subject \
         and attribute so a later value supersedes it.",
    ),
    (
        "memory_revise",
        "/v1/memory/revise",
        "ReviseBody",
        "Confirm, expire or supersede a record, or merge two entities.",
    ),
    (
        "memory_forget",
        "/v1/memory/forget",
        "ForgetBody",
        "Forget a record (it stops being returned; the audit trail keeps that it was forgotten). Give a reason.",
    ),
];

/// The tools over the REST router, as an MCP server handler.
#[derive(Clone)]
pub struct MemoryTools {
    rest: Router,
    tools: Arc<Vec<Tool>>,
    /// The key and principal headers of a stdio server (no HTTP request carries them).
    fixed: Option<Arc<Vec<(String, String)>>>,
    /// How long one tool call may take (REST's request timeout).
    timeout: std::time::Duration,
}

impl std::fmt::Debug for MemoryTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTools").field("tools", &self.tools.len()).finish_non_exhaustive()
    }
}

/// The body schema `name` as a self-contained JSON Schema: the components it refers to move
/// into `$defs`, and `principal` (from the headers here) is dropped.
pub fn input_schema(document: &Value, name: &str) -> Result<JsonObject, String> {
    let schemas = &document["components"]["schemas"];
    let mut schema =
        schemas.get(name).cloned().ok_or_else(|| format!("the document has no schema {name}"))?;
    without_principal(&mut schema);
    let mut defs = serde_json::Map::new();
    let mut pending = Vec::new();
    collect_refs(&schema, &mut pending);
    while let Some(reference) = pending.pop() {
        if defs.contains_key(&reference) {
            continue;
        }
        let mut component = schemas
            .get(&reference)
            .cloned()
            .ok_or_else(|| format!("{name} refers to a missing schema {reference}"))?;
        // A nested body (a supersede's replacement) is the caller's too.
        without_principal(&mut component);
        collect_refs(&component, &mut pending);
        defs.insert(reference, component);
    }
    let mut schema = rewrite_refs(schema);
    if !defs.is_empty() {
        let defs = defs.into_iter().map(|(k, v)| (k, rewrite_refs(v))).collect();
        schema["$defs"] = Value::Object(defs);
    }
    match schema {
        Value::Object(object) => Ok(object),
        _ => Err(format!("schema {name} is not an object")),
    }
}

/// Drop `principal` from a body schema: over MCP it comes from the headers (or the stdio flags).
fn without_principal(schema: &mut Value) {
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.remove("principal");
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| r != "principal");
    }
}

const COMPONENT: &str = "#/components/schemas/";

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref")
                && let Some(name) = r.strip_prefix(COMPONENT)
            {
                out.push(name.to_owned());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

fn rewrite_refs(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("$ref", Value::String(r)) if r.starts_with(COMPONENT) => {
                        (k, Value::String(format!("#/$defs/{}", &r[COMPONENT.len()..])))
                    }
                    (_, v) => (k, rewrite_refs(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(rewrite_refs).collect()),
        other => other,
    }
}

impl MemoryTools {
    /// The tools over `rest` (the REST router), their schemas from `document` (the OpenAPI
    /// document `rest` serves).
    pub fn new(rest: Router, document: &Value) -> Result<Self, String> {
        let tools = TOOLS
            .iter()
            .map(|(name, _, schema, description)| {
                Ok(Tool::new(*name, *description, Arc::new(input_schema(document, schema)?)))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Self { rest, tools: Arc::new(tools), fixed: None, timeout: std::time::Duration::from_secs(30) })
    }

    /// Serve one principal over stdio until the client closes it: every call carries `key`
    /// and this principal, as the headers of an HTTP call would.
    pub async fn serve_stdio(
        mut self,
        key: &str,
        agent_id: &str,
        user_id: &str,
        project_id: Option<&str>,
    ) -> Result<(), String> {
        let mut headers = vec![
            ("authorization".to_owned(), format!("Bearer {key}")),
            ("x-retold-agent-id".to_owned(), agent_id.to_owned()),
            ("x-retold-user-id".to_owned(), user_id.to_owned()),
        ];
        if let Some(project) = project_id {
            headers.push(("x-retold-project-id".to_owned(), project.to_owned()));
        }
        self.fixed = Some(Arc::new(headers));
        let running =
            rmcp::ServiceExt::serve(self, rmcp::transport::stdio()).await.map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string())?;
        Ok(())
    }

    /// How long one tool call may take; past it the call is a tool error with code `timeout`.
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The streamable HTTP service to mount (`Router::nest_service("/mcp", …)`): its sessions
    /// end when `shutdown` is cancelled, it accepts only `allowed_hosts` as `Host`, and reads
    /// at most `max_body_bytes` of a request.
    pub fn service(
        self,
        shutdown: tokio_util::sync::CancellationToken,
        allowed_hosts: &[String],
        max_body_bytes: usize,
    ) -> StreamableHttpService<Self, LocalSessionManager> {
        StreamableHttpService::new(
            move || Ok(self.clone()),
            LocalSessionManager::default().into(),
            StreamableHttpServerConfig::default()
                .with_cancellation_token(shutdown)
                .with_allowed_hosts(allowed_hosts.iter().cloned())
                .with_max_request_body_bytes(max_body_bytes),
        )
    }

    /// Run one tool: the REST request of the same name, with the caller's key and principal.
    async fn call(&self, name: &str, arguments: JsonObject, parts: Option<&Parts>) -> CallToolResult {
        let Some((_, path, _, _)) = TOOLS.iter().find(|(n, ..)| *n == name) else {
            return failure(json!({"code": "not_found", "detail": format!("no tool {name:?}")}));
        };
        let header = |h: &str| match &self.fixed {
            Some(fixed) => fixed.iter().find(|(n, _)| n == h).map(|(_, v)| v.clone()),
            None => parts.and_then(|p| p.headers.get(h)).and_then(|v| v.to_str().ok()).map(str::to_owned),
        };
        let Some(authorization) = header("authorization") else {
            return failure(
                json!({"code": "unauthorized", "detail": "send the host key as Authorization: Bearer <key>"}),
            );
        };
        for required in ["x-retold-agent-id", "x-retold-user-id"] {
            if header(required).is_none() {
                return failure(json!({"code": "validation_failed", "field": required,
                    "detail": format!("send the principal's {required} header")}));
            }
        }
        let mut principal = serde_json::Map::new();
        for (field, name) in [
            ("agent_id", "x-retold-agent-id"),
            ("user_id", "x-retold-user-id"),
            ("project_id", "x-retold-project-id"),
            ("session_id", "x-retold-session-id"),
        ] {
            if let Some(value) = header(name) {
                principal.insert(field.into(), Value::String(value));
            }
        }
        let mut body = arguments;
        // A supersede's replacement is written by the same principal.
        if let Some(Value::Object(replacement)) = body.get_mut("replacement") {
            replacement.insert("principal".into(), Value::Object(principal.clone()));
        }
        body.insert("principal".into(), Value::Object(principal));
        let request = Request::post(*path)
            .header("authorization", authorization)
            .header("content-type", "application/json")
            .body(Body::from(Value::Object(body).to_string()));
        let request = match request {
            Ok(r) => r,
            Err(e) => return failure(json!({"code": "validation_failed", "detail": e.to_string()})),
        };
        let response = match tokio::time::timeout(self.timeout, self.rest.clone().oneshot(request)).await {
            Err(_) => {
                return failure(json!({"code": "timeout",
                    "detail": format!("no answer within {} ms", self.timeout.as_millis())}));
            }
            Ok(Ok(r)) => r,
            Ok(Err(never)) => match never {},
        };
        let status = response.status();
        let bytes = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        let value: Value = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            json!({"code": if status.is_success() { "internal" } else { "error" },
                   "detail": String::from_utf8_lossy(&bytes).chars().take(500).collect::<String>()})
        });
        if status.is_success() {
            let mut result = CallToolResult::success(vec![ContentBlock::text(render(name, &value))]);
            result.structured_content = value.is_object().then_some(value);
            result
        } else {
            failure(value)
        }
    }
}

/// A tool error: `code: detail` as text, the problem document as structured content.
fn failure(problem: Value) -> CallToolResult {
    let text = format!(
        "{}: {}",
        problem["code"].as_str().unwrap_or("error"),
        problem["detail"].as_str().or(problem["title"].as_str()).unwrap_or("the call was refused")
    );
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = problem.is_object().then_some(problem);
    result
}

/// A short text rendering of a tool's answer: search results (a long record's passage) with
/// their explanations, the record ids of the rest.
fn render(tool: &str, answer: &Value) -> String {
    match tool {
        "memory_search" => {
            let hits = answer["results"].as_array().cloned().unwrap_or_default();
            if hits.is_empty() {
                return "No memories matched.".into();
            }
            hits.iter()
                .enumerate()
                .map(|(i, h)| {
                    format!(
                        "{}. [{}] {} ({}) — {}",
                        i + 1,
                        h["record"]["type"].as_str().unwrap_or(""),
                        // A long record shows its passage (what the token budget counted).
                        h["passage"]["text"].as_str().or(h["record"]["content"].as_str()).unwrap_or(""),
                        h["record"]["id"].as_str().unwrap_or(""),
                        h["explanation"].as_str().unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
        "memory_get" => answer["records"]
            .as_array()
            .map(|records| {
                records
                    .iter()
                    .map(|r| {
                        format!(
                            "{} [{}, {}] {}",
                            r["record"]["id"].as_str().unwrap_or(""),
                            r["record"]["type"].as_str().unwrap_or(""),
                            r["record"]["status"].as_str().unwrap_or(""),
                            r["record"]["content"].as_str().unwrap_or("")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_else(|| answer.to_string()),
        _ => answer.to_string(),
    }
}

impl ServerHandler for MemoryTools {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("retold", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Retold is long-term memory for this user: search it before answering questions about the user, \
                 their work or past conversations; write durable facts, preferences and decisions when you learn them.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let parts = context.extensions.get::<Parts>();
        Ok(self.call(&request.name, request.arguments.unwrap_or_default(), parts).await.into())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::render;

    #[test]
    fn a_search_renders_a_long_records_passage_and_a_short_records_content() {
        let answer = json!({"results": [
            {"explanation": "e1", "passage": {"text": "…rotates on Tuesdays…", "start": 10, "end": 30},
             "record": {"type": "episodic", "id": "mem_1", "content": "long long long rotates on Tuesdays and more"}},
            {"explanation": "e2", "passage": null,
             "record": {"type": "semantic", "id": "mem_2", "content": "Jo likes tea."}},
        ]});
        let text = render("memory_search", &answer);
        assert_eq!(
            text,
            "1. [episodic] …rotates on Tuesdays… (mem_1) — e1\n2. [semantic] Jo likes tea. (mem_2) — e2"
        );
    }
}
