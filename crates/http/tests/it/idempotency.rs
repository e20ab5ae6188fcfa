//! `Idempotency-Key` on memory_write, memory_revise, memory_forget and session turns: a
//! retry gets the first answer and writes nothing, a reused key is refused, keys expire and
//! belong to one host key and principal.

use std::sync::Arc;

use axum::http::StatusCode;
use retold_domain::chrono::{TimeDelta, TimeZone, Utc};
use retold_domain::{EligibilityFilter, Embedder, EmbeddingModelInfo, Scope, SessionId, Status};
use retold_test_kit::ManualClock;
use serde_json::{Value, json};

use crate::{ADMIN_KEY, Answer, TestApp, app, principal, settings};

/// A note about Aditya with no current-fact key, so that writing it twice makes two records.
fn note(content: &str) -> Value {
    json!({
        "principal": principal("research-agent", "aditya"),
        "type": "semantic",
        "content": content,
        "scope": "user:aditya",
        "source_kind": "system",
    })
}

/// An app whose services run on `clock` and `embedder`, with `extra` settings.
async fn app_on(
    clock: Arc<ManualClock>,
    embedder: Option<Arc<dyn Embedder>>,
    extra: &[(&str, &str)],
) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let settings = settings(dir.path(), extra);
    let store = Arc::new(
        retold_store_sqlite::SqliteStore::open(&retold_http::store_config(&settings, dir.path()))
            .await
            .unwrap(),
    );
    let stores = retold_app::Stores::from_store(store.clone());
    let (hosted, extraction) = retold_http::hosted_stages(&settings).unwrap();
    let components = retold_http::Components {
        stores,
        index: Arc::new(retold_index::ExactIndex::new(settings.embedding.dims as usize)),
        embedder: embedder.unwrap_or_else(|| crate::embedder(&settings)),
        reranker: None,
        clock,
        ids: Arc::new(retold_http::UlidIds::new().unwrap()),
    };
    let services = retold_http::services(&components, &settings, &hosted, extraction);
    let tasks = services.sessions.tasks().clone();
    let state = retold_http::AppState { services, admin_hashes: vec![retold_http::hash_key(ADMIN_KEY)] };
    TestApp {
        ingestor: state.services.ingestor.clone(),
        settle: std::sync::atomic::AtomicBool::new(true),
        router: retold_http::app(state, &settings.server),
        built_store: retold_http::StoreHandle::Sqlite((*store).clone()),
        tasks,
        _dir: dir,
    }
}

async fn granted(app: &TestApp) -> String {
    app.grant("research-agent", "user:aditya", true, true).await;
    app.host_key(&["research-agent"]).await
}

async fn post(app: &TestApp, path: &str, host: &str, key: Option<&str>, body: &Value) -> Answer {
    let headers: Vec<(&str, &str)> = key.map(|k| ("idempotency-key", k)).into_iter().collect();
    app.call_with("POST", path, Some(host), &headers, Some(body.clone())).await
}

fn replayed(answer: &Answer) -> bool {
    answer.headers.get("idempotent-replayed").is_some_and(|v| v == "true")
}

/// Records in a scope, in any status.
async fn records(app: &TestApp, scope: &str) -> Vec<String> {
    let filter = EligibilityFilter {
        scopes: vec![Scope::parse(scope).unwrap()],
        statuses: Status::ALL.to_vec(),
        now: Utc.with_ymd_and_hms(2000, 1, 1, 0, 0, 0).unwrap(),
        types: None,
        event_from: None,
        event_to: None,
        include_conflicts: false,
        origins: None,
        excluded_session: None,
    };
    app.built_store
        .stores()
        .eligibility
        .eligible(&filter)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id.to_string())
        .collect()
}

#[tokio::test]
async fn a_retried_write_gets_the_first_answer_and_one_record_exists() {
    let app = app().await;
    let host = granted(&app).await;
    let body = note("Aditya reviews pull requests on Fridays.");
    let first = post(&app, "/v1/memory/write", &host, Some("write-1"), &body).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert!(!replayed(&first));
    let retry = post(&app, "/v1/memory/write", &host, Some("write-1"), &body).await;
    assert_eq!((retry.status, &retry.body), (first.status, &first.body), "the first answer, as it was");
    assert!(replayed(&retry), "marked as a replay");
    assert_eq!(records(&app, "user:aditya").await, [first.body["record_id"].as_str().unwrap()]);
    // Without a key, the same body is a new request (and a second record).
    let unkeyed = post(&app, "/v1/memory/write", &host, None, &body).await;
    assert_eq!(unkeyed.status, StatusCode::OK);
    assert_eq!(records(&app, "user:aditya").await.len(), 2);
}

#[tokio::test]
async fn a_retried_revise_forget_or_turn_answers_as_the_first_time_and_changes_nothing_more() {
    let app = app().await;
    let host = granted(&app).await;
    let p = principal("research-agent", "aditya");
    let mut guess = note("Aditya probably lives in Berlin.");
    guess["source_kind"] = json!("agent_inference");
    let written = post(&app, "/v1/memory/write", &host, None, &guess).await;
    let id = written.body["record_id"].as_str().unwrap().to_owned();

    // Confirm twice: without the key, the second would be an illegal transition (409).
    let confirm = json!({"principal": p, "action": "confirm", "id": id});
    let first = post(&app, "/v1/memory/revise", &host, Some("confirm-1"), &confirm).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let retry = post(&app, "/v1/memory/revise", &host, Some("confirm-1"), &confirm).await;
    assert_eq!((retry.status, &retry.body, replayed(&retry)), (first.status, &first.body, true));

    // Forget twice: without the key, the second would be 409 already deleted.
    let forget = json!({"principal": p, "id": id, "reason": "the user asked"});
    let first = post(&app, "/v1/memory/forget", &host, Some("forget-1"), &forget).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let retry = post(&app, "/v1/memory/forget", &host, Some("forget-1"), &forget).await;
    assert_eq!((retry.status, &retry.body, replayed(&retry)), (first.status, &first.body, true));
    let events = app.call("GET", &format!("/v1/admin/records/{id}/events"), Some(ADMIN_KEY), None).await.1;
    let kinds: Vec<&str> =
        events["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["record.created", "record.confirmed", "record.forgotten"], "each change once");

    // A turn appended twice is one turn.
    let (_, session) = app.call("POST", "/v1/sessions", Some(&host), Some(json!({"principal": p}))).await;
    let sid = session["id"].as_str().unwrap();
    let turns = format!("/v1/sessions/{sid}/turns");
    let turn = json!({"principal": p, "role": "user", "content": "I review pull requests on Fridays."});
    let first = post(&app, &turns, &host, Some("turn-1"), &turn).await;
    assert_eq!((first.status, first.body["turn"].as_u64()), (StatusCode::CREATED, Some(1)), "{}", first.body);
    let retry = post(&app, &turns, &host, Some("turn-1"), &turn).await;
    assert_eq!((retry.status, &retry.body, replayed(&retry)), (first.status, &first.body, true));
    let stored = app.built_store.stores().turns.turns(&SessionId::new(sid).unwrap()).await.unwrap();
    assert_eq!(stored.len(), 1);
    // … kept by turn memory as one record.
    assert_eq!(first.body["memory"], "kept", "{}", first.body);
    let search = json!({"principal": p, "query": "When do I review pull requests?", "origins": ["turn"]});
    let (_, found) = app.call("POST", "/v1/memory/search", Some(&host), Some(search)).await;
    let ids: Vec<&Value> = found["results"].as_array().unwrap().iter().map(|r| &r["record"]["id"]).collect();
    assert_eq!(ids, [&first.body["record_ids"][0]], "{found}");
}

#[tokio::test]
async fn a_key_reused_for_another_request_is_refused_and_writes_nothing() {
    let app = app().await;
    let host = granted(&app).await;
    let first = post(&app, "/v1/memory/write", &host, Some("k"), &note("Aditya drinks tea.")).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let other = post(&app, "/v1/memory/write", &host, Some("k"), &note("Aditya drinks coffee.")).await;
    assert_eq!(
        (other.status, other.body["code"].as_str()),
        (StatusCode::CONFLICT, Some("idempotency_key_reused"))
    );
    // A request to another route under the same key is another request too.
    let id = first.body["record_id"].as_str().unwrap();
    let forget = json!({"principal": principal("research-agent", "aditya"), "id": id, "reason": "r"});
    let elsewhere = post(&app, "/v1/memory/forget", &host, Some("k"), &forget).await;
    assert_eq!(elsewhere.body["code"], "idempotency_key_reused", "{}", elsewhere.body);
    // Bad input is refused as such, before its key is looked at.
    let bad = post(&app, "/v1/memory/write", &host, Some("k"), &json!({"colour": "red"})).await;
    assert_eq!(bad.body["field"], "colour", "{}", bad.body);
    assert_eq!(records(&app, "user:aditya").await, [id]);
    let (_, got) = app
        .call(
            "POST",
            "/v1/memory/get",
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya"), "ids": [id]})),
        )
        .await;
    assert_eq!(got["records"][0]["record"]["status"], "confirmed", "not forgotten: {got}");
}

#[tokio::test]
async fn a_key_expires_after_its_configured_time_to_live() {
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap()));
    let app = app_on(clock.clone(), None, &[("RETOLD__SERVER__IDEMPOTENCY_TTL_MS", "60000")]).await;
    const TTL: TimeDelta = TimeDelta::minutes(1);
    let host = granted(&app).await;
    let body = note("Aditya reviews pull requests on Fridays.");
    let first = post(&app, "/v1/memory/write", &host, Some("daily"), &body).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    clock.advance(TTL - TimeDelta::milliseconds(1));
    let within = post(&app, "/v1/memory/write", &host, Some("daily"), &body).await;
    assert!(replayed(&within) && within.body == first.body, "{}", within.body);
    clock.advance(TimeDelta::milliseconds(1));
    let after = post(&app, "/v1/memory/write", &host, Some("daily"), &body).await;
    assert_eq!(after.status, StatusCode::OK, "{}", after.body);
    assert!(!replayed(&after), "the key expired: the request ran again");
    assert_ne!(after.body["record_id"], first.body["record_id"]);
    assert_eq!(records(&app, "user:aditya").await.len(), 2);
}

#[tokio::test]
async fn a_key_belongs_to_one_host_key_and_one_principal() {
    let app = app().await;
    let host = granted(&app).await;
    app.grant("research-agent", "user:bob", true, true).await;
    let other_host = app.host_key(&["research-agent"]).await;
    let body = note("Aditya reviews pull requests on Fridays.");
    let first = post(&app, "/v1/memory/write", &host, Some("shared"), &body).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);

    // Another host key sending the same key and body does not see the first answer.
    let theirs = post(&app, "/v1/memory/write", &other_host, Some("shared"), &body).await;
    assert_eq!(theirs.status, StatusCode::OK, "{}", theirs.body);
    assert!(!replayed(&theirs));
    assert_ne!(theirs.body["record_id"], first.body["record_id"]);

    // Another principal under the same host key: its own key, its own answer.
    let mut bob = note("Bob reviews pull requests on Mondays.");
    bob["principal"] = principal("research-agent", "bob");
    bob["scope"] = json!("user:bob");
    let bobs = post(&app, "/v1/memory/write", &host, Some("shared"), &bob).await;
    assert_eq!(bobs.status, StatusCode::OK, "{}", bobs.body);
    assert!(!replayed(&bobs));
    assert_eq!(records(&app, "user:bob").await, [bobs.body["record_id"].as_str().unwrap()]);
}

#[tokio::test]
async fn a_failed_request_keeps_no_answer_so_its_retry_runs_again() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    let body = note("Aditya reviews pull requests on Fridays.");
    // No grant yet: refused, and nothing written.
    let refused = post(&app, "/v1/memory/write", &host, Some("after-grant"), &body).await;
    assert_eq!(refused.body["code"], "scope_not_writable", "{}", refused.body);
    app.grant("research-agent", "user:aditya", true, true).await;
    let retry = post(&app, "/v1/memory/write", &host, Some("after-grant"), &body).await;
    assert_eq!(retry.status, StatusCode::OK, "{}", retry.body);
    assert!(!replayed(&retry));
    assert_eq!(records(&app, "user:aditya").await.len(), 1);
}

#[tokio::test]
async fn concurrent_requests_with_one_key_write_once() {
    let app = app().await;
    let host = granted(&app).await;
    let body = note("Aditya reviews pull requests on Fridays.");
    let (a, b) = tokio::join!(
        post(&app, "/v1/memory/write", &host, Some("racing"), &body),
        post(&app, "/v1/memory/write", &host, Some("racing"), &body),
    );
    let [first, second] = if replayed(&a) || a.status == StatusCode::CONFLICT { [b, a] } else { [a, b] };
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    // The other one either waited for nothing and got the answer, or was told to retry.
    assert!(
        (replayed(&second) && second.body == first.body)
            || (second.status == StatusCode::CONFLICT
                && second.body["code"] == "conflict"
                && second.headers.get("retry-after").is_some_and(|v| v == "1")),
        "{second:?}"
    );
    assert_eq!(records(&app, "user:aditya").await.len(), 1);
}

#[tokio::test]
async fn a_malformed_key_is_refused_naming_the_header() {
    let app = app().await;
    let host = granted(&app).await;
    let long = "k".repeat(256);
    for key in ["", "has space", "tab\tkey", long.as_str()] {
        let answer = post(&app, "/v1/memory/write", &host, Some(key), &note("Aditya drinks tea.")).await;
        assert_eq!(
            (answer.status, answer.body["field"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("Idempotency-Key")),
            "{key:?}: {}",
            answer.body
        );
    }
    assert!(records(&app, "user:aditya").await.is_empty());
    let ok = post(&app, "/v1/memory/write", &host, Some(&"k".repeat(255)), &note("Aditya drinks tea.")).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
}

#[test]
fn the_document_lists_the_header_and_the_409_on_the_four_writes() {
    let doc: Value = serde_json::from_str(&retold_http::openapi_json()).unwrap();
    for (path, method) in [
        ("/v1/memory/write", "post"),
        ("/v1/memory/revise", "post"),
        ("/v1/memory/forget", "post"),
        ("/v1/sessions/{id}/turns", "post"),
    ] {
        let operation = &doc["paths"][path][method];
        let header =
            operation["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "Idempotency-Key");
        assert!(header.is_some_and(|h| h["in"] == "header" && h["required"] == false), "{path}: {operation}");
        let conflict = operation["responses"]["409"]["description"].as_str().unwrap();
        assert!(conflict.contains("idempotency_key_reused"), "{path}: {conflict}");
    }
}

/// The provisioned embedder behind a gate: each call says it arrived, then waits for a permit.
struct Gate {
    inner: Arc<dyn Embedder>,
    arrived: tokio::sync::Notify,
    permits: tokio::sync::Semaphore,
}

#[async_trait::async_trait]
impl Embedder for Gate {
    fn info(&self) -> &EmbeddingModelInfo {
        self.inner.info()
    }

    async fn embed(&self, texts: &[String]) -> retold_domain::Result<Vec<Vec<f32>>> {
        self.arrived.notify_one();
        self.permits.acquire().await.expect("the gate stays open").forget();
        self.inner.embed(texts).await
    }
}

#[tokio::test]
async fn a_request_in_flight_refuses_its_retry_and_finishes_even_if_its_client_hangs_up() {
    let settings = settings(std::path::Path::new("/unused"), &[]);
    let gate = Arc::new(Gate {
        inner: crate::embedder(&settings),
        arrived: tokio::sync::Notify::new(),
        permits: tokio::sync::Semaphore::new(0),
    });
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap()));
    let app = app_on(clock, Some(gate.clone()), &[]).await;
    let host = granted(&app).await;
    let body = note("Aditya reviews pull requests on Fridays.");
    let request = || {
        axum::http::Request::post("/v1/memory/write")
            .header("authorization", format!("Bearer {host}"))
            .header("content-type", "application/json")
            .header("idempotency-key", "slow")
            .body(axum::body::Body::from(body.to_string()))
            .unwrap()
    };
    // The first request holds the key and waits in the embedder.
    let first = tokio::spawn(tower::ServiceExt::oneshot(app.router.clone(), request()));
    gate.arrived.notified().await;
    let retry = app.send(request()).await;
    assert_eq!(
        (retry.status, retry.body["code"].as_str()),
        (StatusCode::CONFLICT, Some("conflict")),
        "{}",
        retry.body
    );
    // Its client hangs up; the request still finishes and keeps its answer.
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    gate.permits.add_permits(1);
    app.tasks.close();
    app.tasks.wait().await;
    app.tasks.reopen();
    let later = app.send(request()).await;
    assert_eq!(later.status, StatusCode::OK, "{}", later.body);
    assert!(replayed(&later), "the answer of the request whose client hung up");
    assert_eq!(records(&app, "user:aditya").await, [later.body["record_id"].as_str().unwrap()]);
}
