//! Turn memory through the sessions API, with no model key: every appended turn is a
//! searchable episodic record the moment the append answers; turns as hosts have them (when
//! they were said, who spoke, the scope a session keeps them in); bad values refused with
//! nothing stored; and agent data unlike LoCoMo's (no speaker label, a prefix that is no
//! speaker, logs, lists, CJK, timestamps, a 50 kB tool output). Runs on both stores.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::{ADMIN_KEY, TestApp, app, app_in, principal};

async fn start(app: &TestApp, host: &str, who: &Value, scope: Option<&str>) -> (StatusCode, Value) {
    let mut body = json!({"principal": who});
    if let Some(scope) = scope {
        body["scope"] = json!(scope);
    }
    app.call("POST", "/v1/sessions", Some(host), Some(body)).await
}

async fn started(app: &TestApp, host: &str, who: &Value) -> String {
    let (status, session) = start(app, host, who, None).await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    session["id"].as_str().unwrap().to_owned()
}

/// Append `turn` (role, content and any of speaker, at) as `who`.
async fn append(app: &TestApp, host: &str, sid: &str, who: &Value, turn: Value) -> (StatusCode, Value) {
    let mut body = json!({"principal": who});
    body.as_object_mut().unwrap().extend(turn.as_object().unwrap().clone());
    app.call("POST", &format!("/v1/sessions/{sid}/turns"), Some(host), Some(body)).await
}

/// Append and expect it kept by turn memory; returns the answer.
async fn kept(app: &TestApp, host: &str, sid: &str, who: &Value, turn: Value) -> Value {
    let (status, answer) = append(app, host, sid, who, turn).await;
    assert_eq!((status, answer["memory"].as_str()), (StatusCode::CREATED, Some("kept")), "{answer}");
    answer
}

async fn search(app: &TestApp, host: &str, body: Value) -> Value {
    let (status, found) = app.call("POST", "/v1/memory/search", Some(host), Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    found
}

fn ids(found: &Value) -> Vec<String> {
    found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["record"]["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn transcript(app: &TestApp, sid: &str) -> Vec<Value> {
    let (status, turns) =
        app.call("GET", &format!("/v1/admin/sessions/{sid}/turns"), Some(ADMIN_KEY), None).await;
    assert_eq!(status, StatusCode::OK, "{turns}");
    turns["turns"].as_array().unwrap().clone()
}

async fn get(app: &TestApp, host: &str, who: &Value, id: &str) -> Value {
    let (status, got) =
        app.call("POST", "/v1/memory/get", Some(host), Some(json!({"principal": who, "ids": [id]}))).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    got["records"][0].clone()
}

#[tokio::test]
async fn a_conversation_becomes_searchable_memory_the_moment_each_turn_is_appended_with_no_model_key() {
    let app = app().await;
    // No call waits for sentence vectors: what is asserted is what a search sees the instant
    // an append answers.
    app.settle.store(false, std::sync::atomic::Ordering::Relaxed);
    let host = app.host_key(&[]).await;
    let jo = principal("assistant", "jo");
    let sid = started(&app, &host, &jo).await;
    let said = "My cat Biscuit is allergic to chicken, so I buy salmon kibble.";
    let turn = kept(&app, &host, &sid, &jo, json!({"role": "user", "content": said})).await;
    let [record] = turn["record_ids"].as_array().unwrap().as_slice() else { panic!("one record: {turn}") };
    let record = record.as_str().unwrap().to_owned();

    // Found at once, from outside the session, as the turn's own words.
    let found = search(&app, &host, json!({"principal": jo, "query": "What is my cat allergic to?"})).await;
    assert_eq!(ids(&found).first(), Some(&record), "{found}");
    let hit = &found["results"][0];
    assert_eq!(hit["record"]["content"], said);
    assert_eq!(
        (
            hit["record"]["origin"].as_str(),
            hit["record"]["type"].as_str(),
            hit["record"]["source_kind"].as_str()
        ),
        (Some("turn"), Some("episodic"), Some("user_statement"))
    );
    assert_eq!(hit["record"]["source_ref"], turn["source_ref"]);
    assert_eq!(hit["record"]["scope_id"], "assistant/jo", "the principal's private scope");
    let explanation = hit["explanation"].as_str().unwrap();
    assert!(explanation.contains("origin: a session turn, kept verbatim"), "{explanation}");

    // The assistant's reply is kept too, as the agent's own words.
    let reply = kept(
        &app,
        &host,
        &sid,
        &jo,
        json!({"role": "assistant", "content": "Noted: no chicken for Biscuit."}),
    )
    .await;
    let reply_id = reply["record_ids"][0].as_str().unwrap().to_owned();
    let got = get(&app, &host, &jo, &reply_id).await;
    assert_eq!(
        (got["record"]["source_kind"].as_str(), got["record"]["status"].as_str()),
        (Some("system"), Some("confirmed"))
    );
    assert_eq!(got["context"], said, "said after the user's turn");
    assert_eq!(got["links"][0]["role"], "about", "about its speaker, the agent: {got}");

    // Inside the session, its own conversation is left out unless asked for.
    let in_session = json!({"agent_id": "assistant", "user_id": "jo", "session_id": sid});
    let query = "What is my cat allergic to?";
    let inside = search(&app, &host, json!({"principal": in_session, "query": query})).await;
    assert!(!ids(&inside).contains(&record), "{inside}");
    let asked = search(
        &app,
        &host,
        json!({"principal": in_session, "query": query, "include_current_session": true}),
    )
    .await;
    assert!(ids(&asked).contains(&record), "{asked}");

    // Told apart from distilled memories: a search may ask for either.
    let (_, end) = app
        .call("POST", &format!("/v1/sessions/{sid}/end"), Some(&host), Some(json!({"principal": jo})))
        .await;
    assert_eq!(end, Value::Null, "ended; extraction is off without a key");
    let distilled =
        search(&app, &host, json!({"principal": jo, "query": query, "origins": ["memory"]})).await;
    assert_eq!(distilled["results"], json!([]), "{distilled}");
    let turns = search(&app, &host, json!({"principal": jo, "query": query, "origins": ["turn"]})).await;
    assert_eq!(ids(&turns).first(), Some(&record));
    let (status, refused) = app
        .call(
            "POST",
            "/v1/memory/search",
            Some(&host),
            Some(json!({"principal": jo, "query": query, "origins": ["notes"]})),
        )
        .await;
    assert_eq!(
        (status, refused["field"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("origins")),
        "{refused}"
    );

    // Another user of the same agent sees none of it.
    let sam = search(&app, &host, json!({"principal": principal("assistant", "sam"), "query": query})).await;
    assert_eq!(sam["results"], json!([]), "{sam}");

    // The audit trail says what it is.
    let (_, events) =
        app.call("GET", &format!("/v1/admin/records/{record}/events"), Some(ADMIN_KEY), None).await;
    let created = &events["events"][0];
    assert_eq!(
        (created["kind"].as_str(), created["details"]["origin"].as_str()),
        (Some("record.created"), Some("turn"))
    );
    assert_eq!(created["details"]["evidence_check"], "the cited turn itself");

    // Forgetting the turn's record takes it out of search; the transcript keeps the turn.
    let forget = json!({"principal": jo, "id": record, "reason": "the user asked"});
    let (status, _) = app.call("POST", "/v1/memory/forget", Some(&host), Some(forget)).await;
    assert_eq!(status, StatusCode::OK);
    let after = search(&app, &host, json!({"principal": jo, "query": query})).await;
    assert!(!ids(&after).contains(&record), "{after}");
    assert_eq!(transcript(&app, &sid).await[0]["content"], said);
}

#[tokio::test]
async fn turns_carry_when_they_were_said_and_who_said_them_and_bad_values_store_nothing() {
    let app = app().await;
    let host = app.host_key(&[]).await;
    let host_of_chat = principal("chat-host", "team");
    let sid = started(&app, &host, &host_of_chat).await;
    let caroline = "I went to a LGBTQ support group yesterday and it was so powerful.";
    let first = kept(
        &app,
        &host,
        &sid,
        &host_of_chat,
        json!({"role": "user", "content": caroline, "speaker": "Caroline", "at": "2023-05-08T13:56:00Z"}),
    )
    .await;
    let second = kept(
        &app,
        &host,
        &sid,
        &host_of_chat,
        json!({"role": "user", "content": "That's great! What did you learn there?", "speaker": "Melanie",
               "at": "2023-05-08T13:57:00Z"}),
    )
    .await;
    let records = search(
        &app,
        &host,
        json!({"principal": host_of_chat, "query": "When did Caroline go to the support group?"}),
    )
    .await;
    let top = &records["results"][0]["record"];
    assert_eq!(top["id"], first["record_ids"][0], "{records}");
    assert_eq!(
        (top["speaker"].as_str(), top["event_at"].as_str()),
        (Some("Caroline"), Some("2023-05-08T13:56:00Z"))
    );
    let melanie = get(&app, &host, &host_of_chat, second["record_ids"][0].as_str().unwrap()).await;
    assert_eq!(
        melanie["context"].as_str(),
        Some(format!("Caroline: {caroline}").as_str()),
        "what it answers, and who said it"
    );
    assert_eq!(melanie["links"][0]["role"], "about", "about its speaker: {melanie}");
    let listed = transcript(&app, &sid).await;
    assert_eq!(
        (listed[1]["speaker"].as_str(), listed[1]["at"].as_str()),
        (Some("Melanie"), Some("2023-05-08T13:57:00Z"))
    );

    // Refused, naming the field, and nothing stored: a time before the previous turn's, a
    // time in the future, a blank speaker or one with a control character, a time that is
    // not a time.
    let future =
        (retold_domain::chrono::Utc::now() + retold_domain::chrono::TimeDelta::hours(1)).to_rfc3339();
    for (turn, field) in [
        (json!({"role": "user", "content": "Earlier.", "at": "2023-05-08T13:00:00Z"}), "at"),
        (json!({"role": "user", "content": "Later.", "at": future}), "at"),
        (json!({"role": "user", "content": "Hi.", "speaker": "   "}), "speaker"),
        (json!({"role": "user", "content": "Hi.", "speaker": "Bell\u{7}"}), "speaker"),
        (json!({"role": "user", "content": "Hi.", "speaker": ""}), "speaker"),
        (json!({"role": "user", "content": "Hi.", "at": "yesterday"}), "at"),
        (json!({"role": "narrator", "content": "Hi."}), "role"),
        (json!({"role": "user", "content": " \n\t "}), "content"),
        (json!({"role": "user", "content": "Hi\u{0}there."}), "content"),
    ] {
        let (status, refused) = append(&app, &host, &sid, &host_of_chat, turn.clone()).await;
        assert_eq!(
            (status, refused["field"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{turn}: {refused}"
        );
    }
    assert_eq!(transcript(&app, &sid).await.len(), 2, "no refused turn was stored");
    let everything = search(
        &app,
        &host,
        json!({"principal": host_of_chat, "query": "Hi Earlier Later", "origins": ["turn"]}),
    )
    .await;
    assert!(ids(&everything).len() <= 2, "no refused turn became a record: {everything}");
}

#[tokio::test]
async fn a_session_keeps_its_turns_in_the_scope_it_names_while_its_principal_may_write_there() {
    let app = app().await;
    let host = app.host_key(&[]).await;
    let grant = app.grant("assistant", "project:apollo", true, true).await;
    let jo = principal("assistant", "jo");
    let (status, session) = start(&app, &host, &jo, Some("project:apollo")).await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    let sid = session["id"].as_str().unwrap().to_owned();
    let turn = kept(
        &app,
        &host,
        &sid,
        &jo,
        json!({"role": "user", "content": "The staging deploy key rotates every Monday."}),
    )
    .await;
    // A teammate of the same agent reads the project's shared memory.
    let found = search(&app, &host, json!({"principal": principal("assistant", "sam"), "query": "When does the staging deploy key rotate?"}))
        .await;
    let top = &found["results"][0]["record"];
    assert_eq!(
        (top["id"].clone(), top["scope_kind"].as_str(), top["scope_id"].as_str()),
        (turn["record_ids"][0].clone(), Some("project"), Some("apollo"))
    );

    // A scope the principal may not write, or no scope at all, is refused at the start.
    let (status, refused) = start(&app, &host, &jo, Some("project:secret")).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("scope_not_writable")),
        "{refused}"
    );
    let (status, refused) = start(&app, &host, &jo, Some("apollo")).await;
    assert_eq!(
        (status, refused["field"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("scope")),
        "{refused}"
    );

    // Its grant revoked mid-session: the turn is in the transcript, and no record is kept.
    let gid = grant["id"].as_str().unwrap();
    let (status, _) = app.call("DELETE", &format!("/v1/admin/grants/{gid}"), Some(ADMIN_KEY), None).await;
    assert!(status.is_success(), "{status}");
    let (status, late) =
        append(&app, &host, &sid, &jo, json!({"role": "user", "content": "The prod key rotates monthly."}))
            .await;
    assert_eq!(
        (status, late["memory"].as_str(), late["record_ids"].clone()),
        (StatusCode::CREATED, Some("scope_not_writable"), json!([])),
        "{late}"
    );
    assert_eq!(transcript(&app, &sid).await.len(), 2);
}

#[tokio::test]
async fn with_turn_memory_off_a_turn_is_in_the_transcript_only() {
    let app = app_in(tempfile::tempdir().unwrap(), &[("RETOLD__SESSIONS__TURN_MEMORY", "false")]).await;
    let host = app.host_key(&[]).await;
    let jo = principal("assistant", "jo");
    let sid = started(&app, &host, &jo).await;
    let (status, turn) = append(
        &app,
        &host,
        &sid,
        &jo,
        json!({"role": "user", "content": "My cat Biscuit is allergic to chicken."}),
    )
    .await;
    assert_eq!(
        (status, turn["memory"].as_str(), turn["record_ids"].clone()),
        (StatusCode::CREATED, Some("off"), json!([]))
    );
    let found = search(&app, &host, json!({"principal": jo, "query": "What is my cat allergic to?"})).await;
    assert_eq!(found["results"], json!([]), "{found}");
    assert_eq!(found["eligible_count"], 0);
}

#[tokio::test]
async fn agent_turns_unlike_locomo_are_found_by_what_they_say() {
    let app = app().await;
    let host = app.host_key(&[]).await;
    let dev = principal("coder", "ana");
    let sid = started(&app, &host, &dev).await;
    let tool = |content: String| json!({"role": "tool", "content": content});

    // A tool's output whose first word ends in a colon is no speaker's line; it is found by
    // the identifier it names.
    let refused = kept(&app, &host, &sid, &dev, tool(
        "ERROR: connection refused to db-prod-3:5432\nretrying in 5 s with backoff\nERROR: giving up after 3 attempts".into(),
    ))
    .await;
    let found =
        search(&app, &host, json!({"principal": dev, "query": "Why could we not reach db-prod-3?"})).await;
    assert_eq!(ids(&found).first(), refused["record_ids"][0].as_str().map(str::to_owned).as_ref(), "{found}");
    assert_eq!(found["results"][0]["record"]["speaker"], Value::Null);

    // A log: each line is a sentence of its own, so the one line a question asks about is
    // found, and shown, among forty.
    let mut lines: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "2024-05-03T10:{:02}:{:02}Z step {i} of the pipeline completed on runner-7 in {} ms",
                i / 2,
                i % 60,
                900 + i
            )
        })
        .collect();
    lines.insert(5, "2024-05-03T10:02:30Z test suite auth failed with E4021 after the token refresh".into());
    let log = lines.join("\n");
    let logged = kept(&app, &host, &sid, &dev, tool(log)).await;
    let found =
        search(&app, &host, json!({"principal": dev, "query": "Which test suite failed with E4021?"})).await;
    let hit = &found["results"][0];
    assert_eq!(hit["record"]["id"], logged["record_ids"][0], "{found}");
    let shown = hit["passage"]["text"].as_str().unwrap_or_else(|| hit["record"]["content"].as_str().unwrap());
    assert!(shown.contains("test suite auth failed with E4021"), "{hit}");

    // An ISO timestamp in the text is a time: a question asking when ranks it up.
    let explanation = hit["explanation"].as_str().unwrap();
    let when = search(
        &app,
        &host,
        json!({"principal": dev, "query": "When did the auth test suite fail with E4021?"}),
    )
    .await;
    let when_explained = when["results"][0]["explanation"].as_str().unwrap();
    assert!(when_explained.contains("names a time"), "{when_explained} (first search: {explanation})");

    // A bullet list: each item is a sentence of its own.
    let list = kept(&app, &host, &sid, &dev, json!({"role": "user", "content":
        "Things I packed for the offsite:\n- hiking boots and wool socks\n- my blue rain jacket with the hood\n- two full water bottles"}))
        .await;
    let found =
        search(&app, &host, json!({"principal": dev, "query": "What colour is my rain jacket?"})).await;
    assert_eq!(ids(&found).first(), list["record_ids"][0].as_str().map(str::to_owned).as_ref(), "{found}");

    // A bilingual support chat: CJK sentence ends split it, and its identifier is found.
    let chat = kept(
        &app,
        &host,
        &sid,
        &dev,
        json!({"role": "user", "content":
        "客户说：订单还没有发货。请尽快处理！The order number is A-1042 and the customer is waiting."}),
    )
    .await;
    let found =
        search(&app, &host, json!({"principal": dev, "query": "What is the status of order A-1042?"})).await;
    assert_eq!(ids(&found).first(), chat["record_ids"][0].as_str().map(str::to_owned).as_ref(), "{found}");

    // A 50 kB tool output: kept whole, in parts that each fit a record, and its last lines
    // are found like its first.
    let mut big: String =
        (0..900).map(|i| format!("shard {i:04} verified: 128 blocks, checksum ok, 0 repairs\n")).collect();
    big.push_str("FATAL: checksum mismatch in shard 7731 on volume vol-9f2e, refusing to mount\n");
    assert!(big.len() > 50_000, "{}", big.len());
    let parts = kept(&app, &host, &sid, &dev, tool(big.clone())).await;
    let part_ids = parts["record_ids"].as_array().unwrap();
    assert!(part_ids.len() >= 7, "{} parts", part_ids.len());
    let found =
        search(&app, &host, json!({"principal": dev, "query": "checksum mismatch in shard 7731"})).await;
    let last = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .take(3)
        .find(|r| r["record"]["id"] == *part_ids.last().unwrap())
        .unwrap_or_else(|| panic!("the last part is among the first three: {found}"));
    let shown =
        last["passage"]["text"].as_str().unwrap_or_else(|| last["record"]["content"].as_str().unwrap());
    assert!(shown.contains("FATAL: checksum mismatch in shard 7731"), "{last}");
    let mut whole = String::new();
    for id in part_ids {
        let part = get(&app, &host, &dev, id.as_str().unwrap()).await;
        let content = part["record"]["content"].as_str().unwrap();
        assert!(content.chars().count() <= retold_domain::MAX_CONTENT_CHARS);
        assert_eq!(part["record"]["source_ref"], parts["source_ref"], "every part cites the turn");
        whole.push_str(content);
        whole.push('\n');
    }
    assert_eq!(whole, big, "the parts hold the whole output, in order");
    assert_eq!(transcript(&app, &sid).await.last().unwrap()["content"], big.as_str());
}

#[tokio::test]
async fn a_purged_turn_leaves_its_record_in_memory() {
    let app =
        app_in(tempfile::tempdir().unwrap(), &[("RETOLD__OPERATIONS__TRANSCRIPT_RETENTION_DAYS", "0")]).await;
    let host = app.host_key(&[]).await;
    let jo = principal("assistant", "jo");
    let sid = started(&app, &host, &jo).await;
    let turn = kept(
        &app,
        &host,
        &sid,
        &jo,
        json!({"role": "user", "content": "My passport expires in March 2027."}),
    )
    .await;
    let (status, _) = app
        .call("POST", &format!("/v1/sessions/{sid}/end"), Some(&host), Some(json!({"principal": jo})))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // Retention with no waiting period (and `force`: this session was never extracted).
    let (status, purged) =
        app.call("POST", "/v1/admin/ops/retention", Some(ADMIN_KEY), Some(json!({"force": true}))).await;
    assert_eq!(status, StatusCode::OK, "{purged}");
    assert_eq!(transcript(&app, &sid).await, Vec::<Value>::new(), "{purged}");
    // Transcript retention bounds the session buffer; the turn kept as memory stays memory,
    // until it is forgotten, erased or expired like any other.
    let found = search(&app, &host, json!({"principal": jo, "query": "When does my passport expire?"})).await;
    assert_eq!(found["results"][0]["record"]["id"], turn["record_ids"][0], "{found}");
    assert_eq!(found["results"][0]["record"]["source_ref"], turn["source_ref"]);
}
