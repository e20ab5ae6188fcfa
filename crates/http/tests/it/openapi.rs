//! The checked-in OpenAPI document matches the code and is a valid 3.1 document in which
//! every operation documents a 4xx response.

use serde_json::Value;

use crate::{ADMIN_KEY, app};

fn checked_in() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json"))
        .expect("docs/openapi.json exists (cargo xtask openapi writes it)");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn docs_openapi_json_matches_the_code() {
    let generated: Value = serde_json::from_str(&retold_http::openapi_json()).unwrap();
    assert!(generated == checked_in(), "docs/openapi.json is stale: run `cargo xtask openapi` and commit it");
}

#[test]
fn the_document_is_openapi_3_1_with_a_4xx_for_every_operation() {
    let doc = checked_in();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1."), "{}", doc["openapi"]);
    let mut operation_ids = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            assert!(responses.keys().any(|code| code.starts_with('4')), "{method} {path} documents no 4xx");
            operation_ids.push(operation["operationId"].as_str().unwrap().to_owned());
        }
    }
    for tool in ["memory_search", "memory_get", "memory_write", "memory_revise", "memory_forget"] {
        assert!(operation_ids.iter().any(|id| id == tool), "{tool} missing");
    }
    // Request bodies are documented field by field.
    let write = &doc["components"]["schemas"]["WriteBody"]["properties"];
    assert!(write["content"]["maxLength"].is_number(), "{write}");
    assert!(write["source_kind"]["description"].is_string());
}

#[tokio::test]
async fn the_service_serves_the_document_and_an_offline_docs_page() {
    let app = app().await;
    let (status, body) = app.call("GET", "/openapi.json", None, None).await;
    assert_eq!(status, axum::http::StatusCode::OK);
    assert_eq!(body, checked_in());
    let (status, page) = app.call("GET", "/docs/", Some(ADMIN_KEY), None).await;
    assert_eq!(status, axum::http::StatusCode::OK);
    let page = page.as_str().unwrap();
    assert!(
        page.contains("swagger-ui") && !page.contains("https://"),
        "the page loads nothing from the internet"
    );
}
