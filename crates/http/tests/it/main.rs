//! Integration tests of the http crate: configuration, every endpoint through `oneshot`,
//! the OpenAPI document, and end-to-end runs of the real binary.

mod activation;
mod adapters;
mod api;
mod authz;
mod bad_input;
mod cli;
mod clients;
mod crash;
mod disk_full;
mod e2e;
mod extraction;
mod fuzz;
mod idempotency;
mod import;
mod inspector;
mod load;
mod mcp;
mod openapi;
mod operations;
mod ops_under_load;
mod orchestrator;
mod reembed;
mod replicas;
mod settings;
mod telemetry;
mod turns;

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use retold_http::{Built, Settings};
use retold_index::OnnxEmbedder;
use serde_json::{Value, json};
use tower::ServiceExt;

/// The embedding model the default configuration serves: its name and version, as stored
/// with every vector.
pub(crate) fn served_model() -> (String, u32) {
    let settings = Settings::load(None).expect("the default configuration loads");
    (settings.embedding.model, settings.embedding.version)
}

pub(crate) const ADMIN_KEY: &str = "test-admin-key";

pub(crate) fn embedder(settings: &Settings) -> Arc<OnnxEmbedder> {
    static EMBEDDER: OnceLock<Arc<OnnxEmbedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| {
            Arc::new(OnnxEmbedder::load(retold_http::embedder_config(settings)).expect("cargo xtask setup"))
        })
        .clone()
}

/// The store the tests run on: SQLite by default; with `RETOLD_TEST_BACKEND=postgres` (set
/// by `cargo xtask ci` for its PostgreSQL pass) a database on the tests' PostgreSQL server,
/// one per data directory (a restart on the same directory finds the same database).
pub(crate) fn backend_env(data_dir: &std::path::Path) -> Vec<(String, String)> {
    match std::env::var("RETOLD_TEST_BACKEND").as_deref() {
        Ok("postgres") => {
            let remembered = data_dir.join("test-postgres-url");
            let url = std::fs::read_to_string(&remembered).unwrap_or_else(|_| {
                let url = retold_test_kit::postgres::fresh_database();
                std::fs::create_dir_all(data_dir).unwrap();
                std::fs::write(&remembered, &url).unwrap();
                url
            });
            vec![
                ("RETOLD__STORAGE__BACKEND".to_owned(), "postgres".to_owned()),
                ("RETOLD__STORAGE__URL".to_owned(), url),
            ]
        }
        Ok("sqlite") | Err(_) => Vec::new(),
        Ok(other) => panic!("RETOLD_TEST_BACKEND={other:?}: expected sqlite or postgres"),
    }
}

pub(crate) fn settings(data_dir: &std::path::Path, extra: &[(&str, &str)]) -> Settings {
    let mut env = vec![
        ("RETOLD__SERVER__DATA_DIR".to_owned(), data_dir.display().to_string()),
        ("RETOLD__AUTH__ADMIN_KEY".to_owned(), ADMIN_KEY.to_owned()),
    ];
    env.extend(backend_env(data_dir));
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    Settings::load_with_env(None, env).unwrap()
}

pub(crate) struct TestApp {
    pub(crate) router: Router,
    /// Every call waits for the sentence vectors of the writes it made (`Ingestor::settled`),
    /// so what a test searches next is what a write fully indexed.
    pub(crate) ingestor: retold_ingest::Ingestor,
    /// Whether calls wait for sentence vectors (true unless a test asks what a search sees the
    /// instant a write answers).
    pub(crate) settle: std::sync::atomic::AtomicBool,
    pub(crate) built_store: retold_http::StoreHandle,
    /// Background work the app started (extraction runs).
    pub(crate) tasks: tokio_util::task::TaskTracker,
    _dir: tempfile::TempDir,
}

pub(crate) async fn app_in(dir: tempfile::TempDir, extra: &[(&str, &str)]) -> TestApp {
    let settings = settings(dir.path(), extra);
    let Built { state, store, .. } = retold_http::build(&settings, embedder(&settings)).await.unwrap();
    let tasks = state.services.sessions.tasks().clone();
    TestApp {
        ingestor: state.services.ingestor.clone(),
        settle: std::sync::atomic::AtomicBool::new(true),
        router: retold_http::app(state, &settings.server),
        built_store: (*store).clone(),
        tasks,
        _dir: dir,
    }
}

pub(crate) async fn app() -> TestApp {
    app_in(tempfile::tempdir().unwrap(), &[]).await
}

/// A response as the tests read it.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: axum::http::HeaderMap,
    /// JSON bodies parsed, other bodies as a string, an empty body as null.
    pub(crate) body: Value,
}

impl TestApp {
    pub(crate) async fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let answer = self.call_with(method, path, key, &[], body).await;
        (answer.status, answer.body)
    }

    /// `call` with extra request headers.
    pub(crate) async fn call_with(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Answer {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(key) = key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let body = match body {
            Some(value) => {
                request = request.header("content-type", "application/json");
                Body::from(value.to_string())
            }
            None => Body::empty(),
        };
        self.send(request.body(body).unwrap()).await
    }

    /// Any request, as built by the caller. Every error answer must be problem+json.
    pub(crate) async fn send(&self, request: Request<Body>) -> Answer {
        let response = self.router.clone().oneshot(request).await.unwrap();
        if self.settle.load(std::sync::atomic::Ordering::Relaxed) {
            self.ingestor.settled().await;
        }
        let status = response.status();
        let headers = response.headers().clone();
        let content_type = headers.get("content-type").map(|v| v.to_str().unwrap().to_owned());
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else if content_type.as_deref().is_some_and(|c| c.contains("json") && !c.contains("ndjson")) {
            serde_json::from_slice(&bytes).unwrap()
        } else {
            Value::String(String::from_utf8_lossy(&bytes).into_owned())
        };
        if !status.is_success() {
            assert_eq!(content_type.as_deref(), Some("application/problem+json"), "{status} {body}");
        }
        Answer { status, headers, body }
    }

    /// Create a host key limited to `agents`.
    pub(crate) async fn host_key(&self, agents: &[&str]) -> String {
        let (status, body) = self
            .call(
                "POST",
                "/v1/admin/host-keys",
                Some(ADMIN_KEY),
                Some(json!({"name": "test", "agents": agents})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["key"].as_str().unwrap().to_owned()
    }

    pub(crate) async fn grant(&self, agent: &str, scope: &str, read: bool, write: bool) -> Value {
        let (status, body) = self
            .call(
                "POST",
                "/v1/admin/grants",
                Some(ADMIN_KEY),
                Some(json!({"agent_id": agent, "scope": scope, "can_read": read, "can_write": write})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body
    }
}

pub(crate) fn principal(agent: &str, user: &str) -> Value {
    json!({"agent_id": agent, "user_id": user})
}
