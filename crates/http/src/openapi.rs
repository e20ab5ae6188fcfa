//! The OpenAPI 3.1 document, generated from the handlers and DTOs.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::dto;
use crate::error::Problem;
use crate::routes::{admin, inspect, sessions, tools};

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new().scheme(HttpAuthScheme::Bearer).bearer_format("opaque key").build(),
            ),
        );
    }
}

/// Answers any operation can give, added to every one so the document says what is
/// answered: an internal error, and the store's disk failing or full (nothing was written).
struct ServerFaults;

impl Modify for ServerFaults {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let faults = [
            ("500", "internal"),
            ("503", "storage_unavailable (the store's disk failed), or the request timed out"),
            ("507", "storage_full (the store's disk is full; nothing was written, reads still work)"),
        ];
        for item in openapi.paths.paths.values_mut() {
            let operations =
                [&mut item.get, &mut item.post, &mut item.put, &mut item.delete, &mut item.patch];
            for operation in operations.into_iter().flatten() {
                for (status, description) in faults {
                    operation.responses.responses.entry(status.to_owned()).or_insert_with(|| {
                        ResponseBuilder::new()
                            .description(description)
                            .content(
                                "application/problem+json",
                                ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build(),
                            )
                            .build()
                            .into()
                    });
                }
            }
        }
    }
}

/// Retold's REST API.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Retold",
        description = "Long-term memory for AI agents: the five memory tools, sessions and administration.",
        license(name = "Apache-2.0")
    ),
    paths(
        tools::memory_search, tools::memory_get, tools::memory_write, tools::memory_revise, tools::memory_forget,
        tools::memory_inventory, crate::routes::import::memory_import,
        sessions::session_start, sessions::session_profile, sessions::session_append_turn, sessions::session_end,
        sessions::session_decide,
        admin::grant_create, admin::grant_list, admin::grant_revoke,
        admin::entity_create, admin::entity_add_alias, admin::entity_merge,
        admin::host_key_create, admin::record_events, admin::search_trace,
        admin::session_events, admin::extraction_run, admin::decision_get, admin::session_decisions, admin::session_turns,
        crate::routes::ops::ops_erase, crate::routes::ops::ops_expire, crate::routes::ops::ops_snapshot,
        crate::routes::ops::ops_verify, crate::routes::ops::ops_retention, crate::routes::ops::ops_flag_reviews,
        crate::routes::ops::review_list, crate::routes::ops::review_resolve,
        crate::routes::export::export_scope, crate::routes::export::export_user, crate::routes::export::restore,
        inspect::record_list, inspect::record_inspect, inspect::search_list, inspect::search_as,
        inspect::session_list, inspect::session_profile, inspect::conflict_list, inspect::ops_status,
        crate::app::ready,
    ),
    components(schemas(Problem, dto::PrincipalDto)),
    modifiers(&BearerAuth, &ServerFaults),
    tags(
        (name = "memory tools", description = "What agents call, with a host key asserting the principal"),
        (name = "sessions", description = "The session buffer the extractor and evidence checks read"),
        (name = "admin", description = "Grants, entities, keys and inspection, with the admin key"),
        (name = "operations", description = "Health, readiness and maintenance (erasure), with the admin key"),
    )
)]
#[derive(Debug)]
pub struct ApiDoc;

/// The rules the validation code enforces beyond types and lengths, as JSON Schema patterns
/// and enums, so the document refuses exactly what the service refuses (generated clients
/// and schema-driven fuzzers rely on it). Each pattern mirrors a constructor in
/// `retold_domain` (`ids.rs`, `scope.rs`, `record.rs`, `entity.rs`, `source.rs`); the tests
/// check them against those constructors.
pub mod rules {
    /// Agent, user and project ids, scope ids: `ids::check_token`.
    pub const TOKEN: &str = r"^[A-Za-z0-9_.@+-]{1,128}$";
    /// A record id: `RecordId` (`mem_` + ASCII letters, digits, `_`).
    pub const RECORD_ID: &str = r"^mem_[A-Za-z0-9_]{1,124}$";
    /// A record status.
    pub const STATUS: &str = r"^(provisional|confirmed|superseded|expired|deleted)$";
    /// An entity id: `EntityId`.
    pub const ENTITY_ID: &str = r"^ent_[A-Za-z0-9_]{1,124}$";
    /// An orchestrator decision id: `DecisionId`.
    pub const DECISION_ID: &str = r"^dec_[A-Za-z0-9_]{1,124}$";
    /// A session id: `SessionId`.
    pub const SESSION_ID: &str = r"^sess_[A-Za-z0-9_]{1,123}$";
    /// A scope, `kind:id` (`Scope::parse`): only agent scopes carry one `/`.
    pub const SCOPE: &str = r"^((user|project|org):[A-Za-z0-9_.@+-]{1,128}|agent:[A-Za-z0-9_.@+-]{1,128}(/[A-Za-z0-9_.@+-]{1,128})?)$";
    /// A scope a grant may name: never a private `agent:<agent>/<user>` scope.
    pub const GRANT_SCOPE: &str = r"^(user|project|org|agent):[A-Za-z0-9_.@+-]{1,128}$";
    /// Content and evidence (`record::check_text`): not blank, no NUL.
    pub const TEXT: &str = r"^[^\u0000]*[^\s\u0000][^\u0000]*$";
    /// Entity names and aliases (`Name`): surrounding whitespace is trimmed; what is left is
    /// not empty and has no control characters.
    pub const NAME: &str = r"^\s*[^\s\u0000-\u001f\u007f-\u009f]([^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f])?\s*$";
    /// `Attribute`: lowercase letters, digits and `_`, starting with a letter.
    pub const ATTRIBUTE: &str = r"^[a-z][a-z0-9_]{0,63}$";
    /// `Tag`: no whitespace, control characters or commas.
    pub const TAG: &str = r"^[^\s\u0000-\u001f\u007f-\u009f,]{1,64}$";
    /// `SourceRef`: not blank, no control characters (one that starts with `session:` must
    /// also be a well-formed session or turn reference, which the description says).
    pub const SOURCE_REF: &str =
        r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$";
    /// The `Idempotency-Key` header: 1 to 255 visible ASCII characters.
    pub const IDEMPOTENCY_KEY: &str = r"^[!-~]{1,255}$";

    pub const MEMORY_TYPES: &[&str] = &["semantic", "episodic", "procedural"];
    pub const SOURCE_KINDS: &[&str] =
        &["user_statement", "system", "tool_result", "session_summary", "agent_inference"];
    pub const ENTITY_KINDS: &[&str] =
        &["person", "project", "repository", "product", "organization", "other"];
    pub const ROLES: &[&str] = &["user", "assistant", "tool"];
    pub const ORIGINS: &[&str] = &["memory", "turn"];
    pub const REVIEW_ACTIONS: &[&str] = &["confirm", "expire", "forget", "approve", "reject"];
    /// A review id: `ReviewId`.
    pub const REVIEW_ID: &str = r"^rev_[A-Za-z0-9_]{1,124}$";
}

/// What one rule adds to a property's schema.
enum Rule {
    Pattern(&'static str),
    Enum(&'static [&'static str]),
    ItemsPattern(&'static str),
    ItemsEnum(&'static [&'static str]),
}

/// (component schema, property, rule).
const FIELD_RULES: &[(&str, &str, Rule)] = {
    use Rule::*;
    use rules::*;
    &[
        ("PrincipalDto", "agent_id", Pattern(TOKEN)),
        ("PrincipalDto", "user_id", Pattern(TOKEN)),
        ("PrincipalDto", "project_id", Pattern(TOKEN)),
        ("PrincipalDto", "session_id", Pattern(SESSION_ID)),
        ("SearchBody", "types", ItemsEnum(MEMORY_TYPES)),
        ("SearchBody", "origins", ItemsEnum(ORIGINS)),
        ("GetBody", "ids", ItemsPattern(RECORD_ID)),
        ("EntityRefDto", "id", Pattern(ENTITY_ID)),
        ("EntityRefDto", "name", Pattern(NAME)),
        ("EntityRefDto", "kind", Enum(ENTITY_KINDS)),
        ("WriteBody", "type", Enum(MEMORY_TYPES)),
        ("WriteBody", "content", Pattern(TEXT)),
        ("WriteBody", "scope", Pattern(SCOPE)),
        ("WriteBody", "attribute", Pattern(ATTRIBUTE)),
        ("WriteBody", "source_kind", Enum(SOURCE_KINDS)),
        ("WriteBody", "source_ref", Pattern(SOURCE_REF)),
        ("WriteBody", "evidence", Pattern(TEXT)),
        ("WriteBody", "context", Pattern(TEXT)),
        ("WriteBody", "tags", ItemsPattern(TAG)),
        ("SessionBody", "tags", ItemsPattern(TAG)),
        ("ReviseBody", "id", Pattern(RECORD_ID)),
        ("ReviseBody", "from", Pattern(ENTITY_ID)),
        ("ReviseBody", "into", Pattern(ENTITY_ID)),
        ("ForgetBody", "id", Pattern(RECORD_ID)),
        ("GrantBody", "agent_id", Pattern(TOKEN)),
        ("GrantBody", "scope", Pattern(GRANT_SCOPE)),
        ("EntityBody", "kind", Enum(ENTITY_KINDS)),
        ("EntityBody", "canonical_name", Pattern(NAME)),
        ("EntityBody", "scope", Pattern(SCOPE)),
        ("EntityBody", "aliases", ItemsPattern(NAME)),
        ("AliasBody", "alias", Pattern(NAME)),
        ("MergeBody", "from", Pattern(ENTITY_ID)),
        ("MergeBody", "into", Pattern(ENTITY_ID)),
        ("HostKeyBody", "agents", ItemsPattern(TOKEN)),
        ("TurnBody", "role", Enum(ROLES)),
        ("TurnBody", "content", Pattern(TEXT)),
        ("TurnBody", "speaker", Pattern(NAME)),
        ("SessionBody", "scope", Pattern(SCOPE)),
        ("DecisionBody", "turn", Pattern(TEXT)),
        ("DecisionBody", "draft", Pattern(TEXT)),
        ("ExtractionRunBody", "session_id", Pattern(SESSION_ID)),
        ("ErasureBody", "record_id", Pattern(RECORD_ID)),
        ("ErasureBody", "user_id", Pattern(TOKEN)),
        ("ErasureBody", "scope", Pattern(SCOPE)),
        ("ResolveBody", "action", Enum(REVIEW_ACTIONS)),
    ]
};

/// (component schema, JSON merged into it): rules across fields. A `null` counts as absent,
/// as serde reads it.
const SCHEMA_RULES: &[(&str, &str)] = &[
    // `exactly one of id or name`
    (
        "EntityRefDto",
        r#"{"anyOf": [
            {"required": ["id"], "properties": {"id": {"type": "string"}, "name": {"type": "null"}}},
            {"required": ["name"], "properties": {"name": {"type": "string"}, "id": {"type": "null"}}}]}"#,
    ),
    // `an attribute needs a subject entity`
    (
        "WriteBody",
        r#"{"anyOf": [{"properties": {"attribute": {"type": "null"}}},
            {"required": ["subject"], "properties": {"subject": {"type": "object"}}}]}"#,
    ),
    // `give exactly one of record_id, user_id, scope`
    (
        "ErasureBody",
        r#"{"anyOf": [
            {"required": ["record_id"], "properties": {"record_id": {"type": "string"}, "user_id": {"type": "null"}, "scope": {"type": "null"}}},
            {"required": ["user_id"], "properties": {"user_id": {"type": "string"}, "record_id": {"type": "null"}, "scope": {"type": "null"}}},
            {"required": ["scope"], "properties": {"scope": {"type": "string"}, "record_id": {"type": "null"}, "user_id": {"type": "null"}}}]}"#,
    ),
    // `a grant must allow reading or writing`
    (
        "GrantBody",
        r#"{"anyOf": [{"properties": {"can_read": {"const": true}}}, {"properties": {"can_write": {"const": true}}}]}"#,
    ),
    // What each action needs.
    (
        "ReviseBody",
        r#"{"anyOf": [
            {"properties": {"action": {"enum": ["confirm", "expire"]}, "id": {"type": "string"}}, "required": ["id"]},
            {"properties": {"action": {"const": "supersede"}, "id": {"type": "string"}, "replacement": {"type": "object"}},
             "required": ["id", "replacement"]},
            {"properties": {"action": {"const": "merge_entities"}, "from": {"type": "string"}, "into": {"type": "string"}},
             "required": ["from", "into"]}]}"#,
    ),
];

/// (path, parameter, pattern) for path, query and header parameters.
const PARAMETER_RULES: &[(&str, &str, &str)] = &[
    ("/v1/sessions/{id}/turns", "id", rules::SESSION_ID),
    ("/v1/sessions/{id}/end", "id", rules::SESSION_ID),
    ("/v1/sessions/{id}/profile", "id", rules::SESSION_ID),
    ("/v1/sessions/{id}/profile", "agent_id", rules::TOKEN),
    ("/v1/sessions/{id}/profile", "user_id", rules::TOKEN),
    ("/v1/admin/sessions/{id}/events", "id", rules::SESSION_ID),
    ("/v1/admin/sessions/{id}/decisions", "id", rules::SESSION_ID),
    ("/v1/admin/sessions/{id}/turns", "id", rules::SESSION_ID),
    ("/v1/sessions/{id}/decisions", "id", rules::SESSION_ID),
    ("/v1/admin/decisions/{id}", "id", rules::DECISION_ID),
    ("/v1/admin/records/{id}/events", "id", rules::RECORD_ID),
    ("/v1/admin/records/{id}", "id", rules::RECORD_ID),
    ("/v1/admin/records", "scope", rules::SCOPE),
    ("/v1/admin/records", "status", rules::STATUS),
    ("/v1/admin/sessions/{id}/profile", "id", rules::SESSION_ID),
    ("/v1/admin/entities/{id}/aliases", "id", rules::ENTITY_ID),
    ("/v1/admin/reviews/{id}/resolve", "id", rules::REVIEW_ID),
    ("/v1/admin/grants", "agent_id", rules::TOKEN),
    ("*", "Idempotency-Key", rules::IDEMPOTENCY_KEY),
];

fn strings(values: &[&str], nullable: bool) -> serde_json::Value {
    let mut list: Vec<serde_json::Value> = values.iter().map(|v| serde_json::Value::from(*v)).collect();
    if nullable {
        list.push(serde_json::Value::Null);
    }
    list.into()
}

/// Apply [`FIELD_RULES`], [`SCHEMA_RULES`] and [`PARAMETER_RULES`]; a rule naming something the document does
/// not have is a bug, so it panics (the document is built in every test run).
fn apply_rules(doc: &mut serde_json::Value) {
    for (schema, property, rule) in FIELD_RULES {
        let target = doc
            .pointer_mut(&format!("/components/schemas/{schema}/properties/{property}"))
            .unwrap_or_else(|| panic!("FIELD_RULES names {schema}.{property}, which the document lacks"));
        let nullable = target["type"].as_array().is_some_and(|t| t.iter().any(|t| t == "null"));
        match rule {
            Rule::Pattern(p) => target["pattern"] = (*p).into(),
            Rule::Enum(values) => target["enum"] = strings(values, nullable),
            Rule::ItemsPattern(p) => target["items"]["pattern"] = (*p).into(),
            Rule::ItemsEnum(values) => target["items"]["enum"] = strings(values, false),
        }
    }
    for (schema, json) in SCHEMA_RULES {
        let target = doc
            .pointer_mut(&format!("/components/schemas/{schema}"))
            .and_then(|t| t.as_object_mut())
            .unwrap_or_else(|| panic!("SCHEMA_RULES names {schema}, which the document lacks"));
        let rule: serde_json::Value = serde_json::from_str(json).expect("SCHEMA_RULES hold JSON");
        for (key, value) in rule.as_object().expect("an object") {
            target.insert(key.clone(), value.clone());
        }
    }
    for (path, name, pattern) in PARAMETER_RULES {
        let mut applied = 0;
        for (at, item) in doc["paths"].as_object_mut().expect("paths").iter_mut() {
            if *path != "*" && at != path {
                continue;
            }
            for operation in item.as_object_mut().expect("a path item").values_mut() {
                let Some(parameters) = operation.get_mut("parameters").and_then(|p| p.as_array_mut()) else {
                    continue;
                };
                for parameter in parameters.iter_mut().filter(|p| p["name"] == *name) {
                    parameter["schema"]["pattern"] = (*pattern).into();
                    applied += 1;
                }
            }
        }
        assert!(applied > 0, "PARAMETER_RULES names {path} {name}, which the document lacks");
    }
}

/// The document, with the validation rules written in. It stays JSON: utoipa's typed model
/// has no room for the cross-field rules (`anyOf` beside `properties`).
pub fn document() -> serde_json::Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).expect("the OpenAPI document serialises");
    apply_rules(&mut doc);
    doc
}

/// The document as pretty JSON (what `docs/openapi.json` holds).
pub fn openapi_json() -> String {
    serde_json::to_string_pretty(&document()).expect("the OpenAPI document serialises")
}
