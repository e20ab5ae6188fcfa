//! Object-level authorisation, as a randomized model-based test over HTTP against the real
//! `retold serve`: random agents, users, projects, grants (read/write, revocations mid-run),
//! host keys limited to some agents, and records in every kind of scope; random calls of all
//! five tools and the session endpoints. An independent model of seed section 5 (the implicit
//! private scope, grants per agent, a user-scope grant only for that user) says what each call
//! may see and change. Properties, per call:
//! - search returns only records in readable scopes (whichever channel found them: every query
//!   kind is used — a record's unique token for the lexical channel, a paraphrase for the dense
//!   one, an entity's name for the entity one), and its `eligible_count` counts exactly the
//!   readable live records, so not even a count leaks;
//! - get, revise and forget on a record the principal cannot read answer exactly like a record
//!   that does not exist (status and body, up to the id);
//! - a write, revise or forget outside the writable scopes is refused and changes nothing;
//! - another pair's session answers exactly like a missing one;
//! - a host key never asserts an agent it is not limited to.
//!
//! At the end every record's status is read back and must match the model: nothing refused
//! changed anything. `RETOLD_AUTHZ_CASES` sets the number of calls (CI runs 2,000; `cargo
//! xtask reliability authz` runs 10,000) and `RETOLD_AUTHZ_SEED` the seed, printed on failure.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::e2e::start;

const KEY: &str = "authz-admin-key";
const AGENTS: [&str; 3] = ["a0", "a1", "a2"];
const USERS: [&str; 3] = ["u0", "u1", "u2"];
/// Scopes that need a grant.
const SHARED: [&str; 9] = [
    "user:u0",
    "user:u1",
    "user:u2",
    "project:p0",
    "project:p1",
    "org:o0",
    "agent:a0",
    "agent:a1",
    "agent:a2",
];
/// The agent that seeds records into every shared scope; never one of the principals tested.
const SEEDER: &str = "seeder";
const TOPICS: [(&str, &str); 4] = [
    (
        "The deploy runbook for the billing service lives in the team wiki.",
        "where are the deployment instructions",
    ),
    ("Standups moved to half past nine every weekday morning.", "what time is the daily meeting"),
    (
        "The staging database is refreshed from production each Sunday night.",
        "when does the test environment get new data",
    ),
    (
        "Release notes are drafted in the shared changelog document.",
        "where do we write what changed in a release",
    ),
];
const NAMES: [&str; 3] = ["Dana Okafor", "Marek Lindqvist", "Priya Raman"];

/// xorshift64*: deterministic for a seed, so a failure can be replayed.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[derive(Clone)]
struct Grant {
    id: String,
    agent: String,
    scope: String,
    read: bool,
    write: bool,
}

struct Record {
    id: String,
    scope: String,
    token: String,
    status: String,
}

/// What the service should do, from seed section 5 alone.
#[derive(Default)]
struct Model {
    grants: Vec<Grant>,
    records: Vec<Record>,
    /// session id → (agent, user, the scope it keeps its turns in)
    sessions: Vec<(String, String, String, String)>,
}

impl Model {
    fn scopes(&self, agent: &str, user: &str, write: bool) -> BTreeSet<String> {
        let mut out = BTreeSet::from([format!("agent:{agent}/{user}")]);
        for g in &self.grants {
            let applies = g.agent == agent
                && (!g.scope.starts_with("user:") || g.scope == format!("user:{user}"))
                && if write { g.write } else { g.read };
            if applies {
                out.insert(g.scope.clone());
            }
        }
        out
    }
    fn live_readable(&self, agent: &str, user: &str) -> usize {
        let readable = self.scopes(agent, user, false);
        self.records
            .iter()
            .filter(|r| {
                readable.contains(&r.scope) && matches!(r.status.as_str(), "confirmed" | "provisional")
            })
            .count()
    }
}

struct Api {
    client: Client,
    url: String,
    host: String,
    limited: String,
}

impl Api {
    fn post(&self, key: &str, path: &str, body: &Value) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.url))
            .bearer_auth(key)
            .json(body)
            .send()
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        let status = response.status().as_u16();
        let text = response.text().unwrap();
        (status, if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap() })
    }
    fn admin(&self, path: &str, body: &Value) -> Value {
        let (status, answer) = self.post(KEY, path, body);
        assert!(status < 300, "{path} {body}: {status} {answer}");
        answer
    }
}

fn principal(agent: &str, user: &str) -> Value {
    json!({"agent_id": agent, "user_id": user})
}

fn scope_of(record: &Value) -> String {
    format!("{}:{}", record["scope_kind"].as_str().unwrap(), record["scope_id"].as_str().unwrap())
}

/// A problem body with `id` replaced, to compare "unreadable" with "missing".
fn masked(body: &Value, id: &str) -> String {
    body.to_string().replace(id, "<id>")
}

fn grant(api: &Api, model: &mut Model, agent: &str, scope: &str, read: bool, write: bool) {
    let read = read || !write; // a grant that allows nothing is refused (and tested elsewhere)
    let answer = api.admin(
        "/v1/admin/grants",
        &json!({"agent_id": agent, "scope": scope, "can_read": read, "can_write": write}),
    );
    let id = answer["id"].as_str().unwrap().to_owned();
    model.grants.push(Grant { id, agent: agent.into(), scope: scope.into(), read, write });
}

fn write_body(agent: &str, user: &str, scope: &str, token: &str, rng: &mut Rng) -> Value {
    let (topic, _) = rng.pick(&TOPICS);
    let mut body = json!({"principal": principal(agent, user), "type": "semantic",
        "content": format!("{topic} Reference {token}."), "scope": scope,
        "source_kind": if rng.chance(20) { "agent_inference" } else { "system" }});
    if rng.chance(40) {
        body["mentions"] = json!([{"name": rng.pick(&NAMES), "kind": "person"}]);
    }
    if rng.chance(30) {
        // An identity fact: ambient in its owner's profiles (activation).
        body["tags"] = json!(["identity"]);
    }
    body
}

/// The seeder's principal for a scope, and for a private scope its own pair.
fn owner_of(scope: &str) -> (String, String) {
    if let Some(pair) = scope.strip_prefix("agent:")
        && let Some((agent, user)) = pair.split_once('/')
    {
        return (agent.to_owned(), user.to_owned());
    }
    let user = scope.strip_prefix("user:").unwrap_or("u0");
    (SEEDER.to_owned(), user.to_owned())
}

fn all_scopes() -> Vec<String> {
    let mut scopes: Vec<String> = SHARED.iter().map(|s| s.to_string()).collect();
    for agent in AGENTS {
        for user in USERS {
            scopes.push(format!("agent:{agent}/{user}"));
        }
    }
    scopes
}

#[test]
fn no_call_reads_or_changes_a_record_outside_its_principals_scopes() {
    let cases: usize = std::env::var("RETOLD_AUTHZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let seed: u64 =
        std::env::var("RETOLD_AUTHZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5EED_A117);
    eprintln!("authz: {cases} cases, seed {seed} (RETOLD_AUTHZ_SEED={seed} replays it)");
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), KEY);
    retold_hosted::install_tls_provider();
    let client = Client::builder().timeout(std::time::Duration::from_secs(60)).build().unwrap();
    let mut api = Api { client, url: server.url.clone(), host: String::new(), limited: String::new() };
    api.host = api.admin("/v1/admin/host-keys", &json!({"name": "all"}))["key"].as_str().unwrap().to_owned();
    api.limited =
        api.admin("/v1/admin/host-keys", &json!({"name": "limited", "agents": ["a0", "a1"]}))["key"]
            .as_str()
            .unwrap()
            .to_owned();
    let mut model = Model::default();

    // The seeder may write every shared scope; its grants are not part of the model (it is
    // never a tested principal, and the model's scopes() only looks at the agent asked about).
    for scope in SHARED {
        grant(&api, &mut model, SEEDER, scope, true, true);
    }
    let scopes = all_scopes();
    let mut serial = 0u64;
    for scope in &scopes {
        for _ in 0..3 {
            serial += 1;
            let token = format!("tok{serial:04}q");
            let (agent, user) = owner_of(scope);
            let (status, answer) =
                api.post(&api.host, "/v1/memory/write", &write_body(&agent, &user, scope, &token, &mut rng));
            assert_eq!(status, 200, "seeding {scope}: {answer}");
            model.records.push(Record {
                id: answer["record_id"].as_str().unwrap().to_owned(),
                scope: scope.clone(),
                token,
                status: String::new(),
            });
        }
    }
    // Initial grants for the tested agents: each (agent, shared scope) with some chance.
    for agent in AGENTS {
        for scope in SHARED {
            if rng.chance(50) {
                let (read, write) = (rng.chance(80), rng.chance(50));
                grant(&api, &mut model, agent, scope, read, write);
            }
        }
    }
    let status_of = |api: &Api, model: &Model, index: usize| -> String {
        let record = &model.records[index];
        let (agent, user) = owner_of(&record.scope);
        let (status, answer) = api.post(
            &api.host,
            "/v1/memory/get",
            &json!({"principal": principal(&agent, &user), "ids": [record.id]}),
        );
        assert_eq!(status, 200, "reading back {}: {answer}", record.id);
        answer["records"][0]["record"]["status"].as_str().unwrap().to_owned()
    };
    for i in 0..model.records.len() {
        model.records[i].status = status_of(&api, &model, i);
    }

    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    let mut profiled = 0usize;
    for case in 0..cases {
        let agent = *rng.pick(&AGENTS);
        let user = *rng.pick(&USERS);
        let who = principal(agent, user);
        let readable = model.scopes(agent, user, false);
        let writable = model.scopes(agent, user, true);
        let ctx = |what: &str| format!("case {case} (seed {seed}) {what} as {agent}/{user}");
        let roll = rng.below(100);
        let op = match roll {
            0..=34 => "search",
            35..=54 => "get",
            55..=69 => "write",
            70..=79 => "revise",
            80..=84 => "forget",
            85..=92 => "session",
            93..=95 => "limited_key",
            _ => "grants",
        };
        *tally.entry(op).or_default() += 1;
        match op {
            "search" => {
                let query = match rng.below(3) {
                    0 => rng.pick(&model.records).token.clone(),
                    1 => rng.pick(&TOPICS).1.to_owned(),
                    _ => format!("What do we know about {}?", rng.pick(&NAMES)),
                };
                let (status, answer) = api.post(
                    &api.host,
                    "/v1/memory/search",
                    &json!({"principal": who, "query": query, "limit": 50}),
                );
                assert_eq!(status, 200, "{}: {answer}", ctx("search"));
                for hit in answer["results"].as_array().unwrap() {
                    let scope = scope_of(&hit["record"]);
                    assert!(
                        readable.contains(&scope),
                        "{}: {query:?} returned a record in {scope}",
                        ctx("search")
                    );
                }
                assert_eq!(
                    answer["eligible_count"].as_u64().unwrap() as usize,
                    model.live_readable(agent, user),
                    "{}: eligible_count counts exactly the readable live records",
                    ctx("search")
                );
                if rng.chance(30) {
                    // The inventory counts exactly what search could read, and names none of it.
                    let (status, inventory) =
                        api.post(&api.host, "/v1/memory/inventory", &json!({"principal": who}));
                    assert_eq!(status, 200, "{}: {inventory}", ctx("inventory"));
                    assert_eq!(
                        inventory["total"].as_u64().unwrap() as usize,
                        model.live_readable(agent, user),
                        "{}: {inventory}",
                        ctx("inventory")
                    );
                    let text = inventory.to_string();
                    assert!(!text.contains("mem_") && !text.contains("tok"), "{}: {text}", ctx("inventory"));
                }
            }
            "get" => {
                let index = rng.below(model.records.len());
                let record = &model.records[index];
                let (status, answer) =
                    api.post(&api.host, "/v1/memory/get", &json!({"principal": who, "ids": [record.id]}));
                if readable.contains(&record.scope) {
                    assert_eq!(status, 200, "{}: {answer}", ctx("get readable"));
                    assert_eq!(answer["records"][0]["record"]["id"], record.id.as_str());
                } else {
                    let missing = format!("mem_{:0width$}", 0, width = record.id.len() - 4);
                    let (m_status, m_answer) =
                        api.post(&api.host, "/v1/memory/get", &json!({"principal": who, "ids": [missing]}));
                    assert_eq!(
                        (status, masked(&answer, &record.id)),
                        (m_status, masked(&m_answer, &missing)),
                        "{}",
                        ctx("get unreadable")
                    );
                    assert_eq!(status, 404, "{}", ctx("get unreadable"));
                }
                // A batch holding one unreadable id reveals none of the others.
                if !readable.contains(&record.scope) {
                    let other = rng.pick(&model.records).id.clone();
                    let (status, answer) = api.post(
                        &api.host,
                        "/v1/memory/get",
                        &json!({"principal": who, "ids": [other, record.id]}),
                    );
                    assert_eq!(status, 404, "{}: {answer}", ctx("get batch with an unreadable id"));
                    assert!(answer.get("records").is_none());
                }
            }
            "write" => {
                let scope = rng.pick(&scopes).clone();
                serial += 1;
                let token = format!("tok{serial:04}q");
                let body = write_body(agent, user, &scope, &token, &mut rng);
                let (status, answer) = api.post(&api.host, "/v1/memory/write", &body);
                if writable.contains(&scope) && answer["code"] == "entity_ambiguous" {
                    // A mentioned name that several readable entities carry: refused, and
                    // nothing written (the final read-back checks every known record).
                    assert_eq!(status, 409, "{}: {answer}", ctx("ambiguous mention"));
                } else if writable.contains(&scope) {
                    assert_eq!(status, 200, "{}: {answer}", ctx(&format!("write {scope}")));
                    let id = answer["record_id"].as_str().unwrap().to_owned();
                    model.records.push(Record { id, scope, token, status: String::new() });
                    let last = model.records.len() - 1;
                    model.records[last].status = status_of(&api, &model, last);
                } else {
                    assert_eq!(
                        (status, answer["code"].as_str()),
                        (403, Some("scope_not_writable")),
                        "{}",
                        ctx(&format!("write {scope}"))
                    );
                }
            }
            "revise" | "forget" => {
                let index = rng.below(model.records.len());
                let id = model.records[index].id.clone();
                let scope = model.records[index].scope.clone();
                let action = if rng.chance(50) { "confirm" } else { "expire" };
                let body = |id: &str| {
                    if op == "forget" {
                        json!({"principal": who, "id": id, "reason": "authz property test"})
                    } else {
                        json!({"principal": who, "action": action, "id": id})
                    }
                };
                let path = format!("/v1/memory/{op}");
                let (status, answer) = api.post(&api.host, &path, &body(&id));
                if !readable.contains(&scope) {
                    let missing = format!("mem_{:0width$}", 0, width = id.len() - 4);
                    let (m_status, m_answer) = api.post(&api.host, &path, &body(&missing));
                    assert_eq!(
                        (status, masked(&answer, &id)),
                        (m_status, masked(&m_answer, &missing)),
                        "{}",
                        ctx(&format!("{op} unreadable"))
                    );
                    assert_eq!(status, 404, "{}", ctx(&format!("{op} unreadable")));
                } else if !writable.contains(&scope) {
                    assert_eq!(
                        (status, answer["code"].as_str()),
                        (403, Some("scope_not_writable")),
                        "{}: {answer}",
                        ctx(&format!("{op} read-only"))
                    );
                } else if status == 200 {
                    if let Some(to) = answer["to_status"].as_str() {
                        model.records[index].status = to.to_owned();
                    }
                } else {
                    // A writable record may still refuse a transition (a forgotten record
                    // cannot be confirmed): a 4xx that changes nothing.
                    assert!(
                        (400..500).contains(&status),
                        "{}: {status} {answer}",
                        ctx(&format!("{op} writable"))
                    );
                }
            }
            "session" => {
                // A session may keep its turns in a scope it names; only one the principal may
                // write.
                let named = rng.chance(30).then(|| rng.pick(&SHARED).to_string());
                let mut body = json!({"principal": who});
                if let Some(scope) = &named {
                    body["scope"] = json!(scope);
                }
                let (status, answer) = api.post(&api.host, "/v1/sessions", &body);
                if named.as_ref().is_some_and(|scope| !writable.contains(scope)) {
                    assert_eq!(
                        (status, answer["code"].as_str()),
                        (403, Some("scope_not_writable")),
                        "{}: {answer}",
                        ctx("session start in an unwritable scope")
                    );
                } else {
                    assert_eq!(status, 201, "{}: {answer}", ctx("session start"));
                    // The profile holds only records the principal reads.
                    profiled += answer["profile"]["records"].as_array().unwrap().len();
                    for entry in answer["profile"]["records"].as_array().unwrap() {
                        let id = entry["record_id"].as_str().unwrap();
                        let record = model.records.iter().find(|r| r.id == id).expect("a known record");
                        assert!(
                            readable.contains(&record.scope),
                            "{}: profile holds {id} in {}",
                            ctx("profile"),
                            record.scope
                        );
                    }
                    let id = answer["id"].as_str().unwrap().to_owned();
                    let scope = named.unwrap_or_else(|| format!("agent:{agent}/{user}"));
                    model.sessions.push((id, agent.to_owned(), user.to_owned(), scope));
                }
                if model.sessions.is_empty() {
                    continue;
                }
                let (sid, owner_agent, owner_user, kept_in) = rng.pick(&model.sessions).clone();
                let other_agent = *rng.pick(&AGENTS);
                let other_user =
                    if rng.chance(50) { owner_user.clone() } else { rng.pick(&USERS).to_string() };
                serial += 1;
                let token = format!("tok{serial:04}q");
                let turn = json!({"principal": principal(other_agent, &other_user), "role": "user", "content": format!("I moved to Lisbon ({token}).")});
                let (status, answer) = api.post(&api.host, &format!("/v1/sessions/{sid}/turns"), &turn);
                if other_agent == owner_agent && other_user == owner_user {
                    assert_eq!(status, 201, "{}: {answer}", ctx("own session turn"));
                    // Turn memory keeps it in the session's scope while the principal may still
                    // write there (a grant may have been revoked since the session started).
                    if model.scopes(&owner_agent, &owner_user, true).contains(&kept_in) {
                        assert_eq!(answer["memory"], "kept", "{}: {answer}", ctx("turn memory"));
                        let id = answer["record_ids"][0].as_str().unwrap().to_owned();
                        model.records.push(Record { id, scope: kept_in, token, status: "confirmed".into() });
                    } else {
                        assert_eq!(
                            (answer["memory"].as_str(), answer["record_ids"].as_array().map(Vec::len)),
                            (Some("scope_not_writable"), Some(0)),
                            "{}: {answer}",
                            ctx("turn memory after a revoked grant")
                        );
                    }
                } else {
                    let missing = format!("sess_{:0width$}", 0, width = sid.len() - 5);
                    let (m_status, m_answer) =
                        api.post(&api.host, &format!("/v1/sessions/{missing}/turns"), &turn);
                    assert_eq!(
                        (status, masked(&answer, &sid)),
                        (m_status, masked(&m_answer, &missing)),
                        "{}",
                        ctx("another pair's session")
                    );
                    assert_eq!(status, 404, "{}", ctx("another pair's session"));
                }
            }
            "limited_key" => {
                // The limited key may assert a0 and a1 only; a2 is refused whatever the call.
                let body = json!({"principal": principal("a2", user), "query": "deploy runbook"});
                let (status, answer) = api.post(&api.limited, "/v1/memory/search", &body);
                assert_eq!(
                    (status, answer["code"].as_str()),
                    (403, Some("forbidden")),
                    "{}",
                    ctx("limited key")
                );
                let scope = format!("agent:a2/{user}");
                let (status, answer) = api.post(
                    &api.limited,
                    "/v1/memory/write",
                    &write_body("a2", user, &scope, "tok_never", &mut rng),
                );
                assert_eq!(
                    (status, answer["code"].as_str()),
                    (403, Some("forbidden")),
                    "{}",
                    ctx("limited key write")
                );
            }
            _ => {
                // Change the world: a new grant or a revocation, effective on the next call.
                let tested: Vec<usize> =
                    (0..model.grants.len()).filter(|&i| model.grants[i].agent != SEEDER).collect();
                if rng.chance(50) && !tested.is_empty() {
                    let g = model.grants.remove(*rng.pick(&tested));
                    let response = api
                        .client
                        .delete(format!("{}/v1/admin/grants/{}", api.url, g.id))
                        .bearer_auth(KEY)
                        .send()
                        .unwrap();
                    assert_eq!(response.status().as_u16(), 204, "revoking {}", g.id);
                } else {
                    let scope = *rng.pick(&SHARED);
                    grant(&api, &mut model, agent, scope, rng.chance(80), rng.chance(50));
                }
            }
        }
    }

    // Nothing refused changed anything: every record's status is what the model says.
    for i in 0..model.records.len() {
        let actual = status_of(&api, &model, i);
        assert_eq!(
            actual, model.records[i].status,
            "record {} in {}",
            model.records[i].id, model.records[i].scope
        );
    }
    eprintln!(
        "authz: {cases} cases held over {} records and {} grants: {tally:?}; {profiled} profile entries checked",
        model.records.len(),
        model.grants.len()
    );
    if tally.get("session").is_some_and(|n| *n >= 50) {
        assert!(profiled > 0, "no session profile held a record: the profile check checked nothing");
    }
    server.stop();
}
