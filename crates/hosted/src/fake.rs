//! A local HTTP server that speaks the Anthropic Messages and OpenAI Chat Completions wire
//! formats, for tests: it records every request and answers from a script, then from a
//! responder function.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Captured {
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Captured {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The structured-output name the request asks for (Anthropic tool or OpenAI schema name).
    pub fn schema_name(&self) -> Option<&str> {
        self.body["tool_choice"]["name"]
            .as_str()
            .or_else(|| self.body["response_format"]["json_schema"]["name"].as_str())
    }

    /// The user message text.
    pub fn user_text(&self) -> String {
        let messages = self.body["messages"].as_array().cloned().unwrap_or_default();
        messages
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// One answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Status, headers and a body sent as is.
    Raw { status: u16, headers: Vec<(String, String)>, body: String },
    /// Wait, then answer.
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    /// A 200 with this JSON body.
    pub fn json(body: Value) -> Self {
        Self::Raw { status: 200, headers: vec![], body: body.to_string() }
    }

    /// A provider error in both providers' shape.
    pub fn error(status: u16, message: &str) -> Self {
        Self::Raw {
            status,
            headers: vec![],
            body: json!({"type": "error", "error": {"type": "api_error", "message": message}}).to_string(),
        }
    }

    /// A 429 that asks the client to wait `retry_after_ms`.
    pub fn rate_limited(retry_after_ms: u64) -> Self {
        Self::Raw {
            status: 429,
            headers: vec![("retry-after-ms".into(), retry_after_ms.to_string())],
            body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
                .to_string(),
        }
    }

    /// An Anthropic Messages answer that calls tool `name` with `input`.
    pub fn anthropic_tool(name: &str, input: Value) -> Self {
        Self::json(json!({
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "content": [{"type": "tool_use", "id": "toolu_fake", "name": name, "input": input}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 120, "output_tokens": 40},
        }))
    }

    /// An OpenAI Chat Completions answer whose message content is `content`.
    pub fn openai_content(content: &str) -> Self {
        Self::json(json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": "gpt-fake",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": null},
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": 90, "completion_tokens": 30, "total_tokens": 120},
        }))
    }

    /// The structured answer in the wire format of the request it answers.
    pub fn structured(request: &Captured, answer: Value) -> Self {
        let name = request.schema_name().unwrap_or("answer").to_owned();
        if request.path.ends_with("/chat/completions") {
            Self::openai_content(&answer.to_string())
        } else {
            Self::anthropic_tool(&name, answer)
        }
    }

    /// Pause before answering.
    pub fn after(self, delay: Duration) -> Self {
        Self::Delayed(delay, Box::new(self))
    }
}

type Responder = dyn Fn(&Captured) -> Reply + Send + Sync;

struct Inner {
    requests: Mutex<Vec<Captured>>,
    script: Mutex<VecDeque<Reply>>,
    responder: Mutex<Option<Arc<Responder>>>,
}

/// The fake provider server, listening on loopback until dropped.
pub struct FakeProvider {
    addr: SocketAddr,
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for FakeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProvider").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeProvider {
    /// Start a server on a free loopback port.
    pub async fn start() -> std::io::Result<Self> {
        let inner = Arc::new(Inner {
            requests: Mutex::new(Vec::new()),
            script: Mutex::new(VecDeque::new()),
            responder: Mutex::new(None),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = Router::new().fallback(handle).with_state(inner.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, inner, task })
    }

    /// `http://127.0.0.1:<port>`, the base URL to configure.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Answer the next requests with these replies, in order.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.script.lock().unwrap().extend(replies);
    }

    /// Answer requests the script does not cover with `responder`.
    pub fn respond_with(&self, responder: impl Fn(&Captured) -> Reply + Send + Sync + 'static) {
        *self.inner.responder.lock().unwrap() = Some(Arc::new(responder));
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Captured> {
        self.inner.requests.lock().unwrap().clone()
    }
}

async fn handle(State(inner): State<Arc<Inner>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let captured = Captured {
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    inner.requests.lock().unwrap().push(captured.clone());
    let scripted = inner.script.lock().unwrap().pop_front();
    let reply = match scripted {
        Some(reply) => reply,
        None => {
            let responder = inner.responder.lock().unwrap().clone();
            match responder {
                Some(responder) => responder(&captured),
                None => Reply::error(500, "the fake provider has no reply scripted"),
            }
        }
    };
    send(reply).await
}

async fn send(mut reply: Reply) -> Response {
    loop {
        match reply {
            Reply::Delayed(delay, inner) => {
                tokio::time::sleep(delay).await;
                reply = *inner;
            }
            Reply::Raw { status, headers, body } => {
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let mut response = (status, body).into_response();
                response.headers_mut().insert("content-type", "application/json".parse().unwrap());
                for (name, value) in headers {
                    if let (Ok(name), Ok(value)) = (
                        axum::http::HeaderName::from_bytes(name.as_bytes()),
                        axum::http::HeaderValue::from_str(&value),
                    ) {
                        response.headers_mut().insert(name, value);
                    }
                }
                return response;
            }
        }
    }
}
