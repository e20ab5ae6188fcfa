//! Activation and the profile on real components (SQLite, the ONNX model): which records are
//! ambient, the review queue, immutable profiles, conditional ambience, the budget, and the
//! content-free inventory.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::{ADMIN_KEY, TestApp, app_in, principal};

async fn write(app: &TestApp, host: &str, body: Value) -> String {
    let (status, answer) = app.call("POST", "/v1/memory/write", Some(host), Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer["record_id"].as_str().unwrap().to_owned()
}

fn fact(user: &str, attribute: &str, content: &str, source_kind: &str) -> Value {
    json!({"principal": principal("research-agent", user), "type": "semantic", "content": content,
        "scope": format!("user:{user}"), "subject": {"name": user, "kind": "person"},
        "attribute": attribute, "source_kind": source_kind})
}

async fn start(app: &TestApp, host: &str, who: Value, tags: &[&str]) -> Value {
    let (status, session) =
        app.call("POST", "/v1/sessions", Some(host), Some(json!({"principal": who, "tags": tags}))).await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    session
}

fn ids(profile: &Value) -> Vec<String> {
    profile["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["record_id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn verified_facts_become_ambient_by_policy_and_each_profile_is_issued_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    let app = app_in(dir, &[]).await;
    let host = app.host_key(&[]).await;
    for user in ["aditya", "bob"] {
        app.grant("research-agent", &format!("user:{user}"), true, true).await;
    }
    let aditya = principal("research-agent", "aditya");

    // A user statement whose evidence is verified against the session turn: promoted.
    let first = start(&app, &host, aditya.clone(), &[]).await;
    let sid = first["id"].as_str().unwrap();
    assert_eq!(first["profile"]["records"], json!([]), "nothing is ambient yet: {first}");
    let (_, turn) = app
        .call(
            "POST",
            &format!("/v1/sessions/{sid}/turns"),
            Some(&host),
            Some(json!({"principal": aditya, "role": "user", "content": "Keep answers concise."})),
        )
        .await;
    let mut style = fact(
        "aditya",
        "explanation_style",
        "Aditya prefers concise technical explanations.",
        "user_statement",
    );
    style["source_ref"] = turn["source_ref"].clone();
    style["evidence"] = json!("Keep answers concise.");
    let style = write(&app, &host, style).await;
    // The turn itself is kept as memory, but a verbatim turn is never made ambient: only the
    // fact distilled from it is.
    let kept_turn = turn["record_ids"][0].as_str().unwrap().to_owned();
    // The same fact as an agent inference (for another user) is not.
    let (_, bob_guess) = app
        .call(
            "POST",
            "/v1/memory/write",
            Some(&host),
            Some(fact(
                "bob",
                "explanation_style",
                "Bob prefers concise technical explanations.",
                "agent_inference",
            )),
        )
        .await;
    // A health fact waits for review; an identity fact and a project convention.
    let allergy =
        write(&app, &host, fact("aditya", "allergy", "Aditya is allergic to peanuts.", "system")).await;
    let zone = write(&app, &host, fact("aditya", "time_zone", "Aditya's time zone is CET.", "system")).await;
    let mut convention =
        fact("aditya", "commit_convention", "Aditya's commits follow Conventional Commits.", "system");
    convention["tags"] = json!(["project:retold"]);
    let convention = write(&app, &host, convention).await;

    // A schedule attribute tagged health: the most restrictive matching category wins.
    let mut medication =
        fact("aditya", "medication_schedule", "Aditya takes his medication at 8am.", "system");
    medication["tags"] = json!(["health"]);
    let medication = write(&app, &host, medication).await;

    let second = start(&app, &host, aditya.clone(), &[]).await;
    let profile = &second["profile"];
    assert_eq!(ids(profile), [zone.clone(), style.clone()], "identity before communication: {profile}");
    assert!(!ids(profile).contains(&kept_turn), "the turn it was distilled from is not ambient");
    let text = profile["text"].as_str().unwrap();
    assert!(text.contains("- [communication] Aditya prefers concise technical explanations."), "{text}");
    assert!(!text.contains("peanuts") && !text.contains("medication"), "health waits for review: {text}");
    assert!(!ids(profile).contains(&medication));
    let why = &profile["records"][1]["why"];
    assert_eq!(why, "communication: promote (attribute explanation_style ~ style)", "{profile}");
    let bob = start(&app, &host, principal("research-agent", "bob"), &[]).await;
    assert_eq!(bob["profile"]["records"], json!([]), "an inference is never ambient: {bob} ({bob_guess})");

    // The decision is audited with its rule and basis.
    let (_, events) =
        app.call("GET", &format!("/v1/admin/records/{style}/events"), Some(ADMIN_KEY), None).await;
    let decided =
        events["events"].as_array().unwrap().iter().find(|e| e["kind"] == "activation.decided").cloned();
    let decided = decided.unwrap_or_else(|| panic!("no activation.decided event: {events}"));
    assert_eq!(decided["details"]["policy"], "promote", "{decided}");
    assert_eq!(decided["details"]["basis"], "user_statement with verified evidence", "{decided}");

    // The health fact is in the review queue; approved, it is ambient in the next session.
    let (_, queue) = app.call("GET", "/v1/admin/reviews", Some(ADMIN_KEY), None).await;
    let item = queue["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["record_id"] == allergy.as_str() && r["reason"] == "activation")
        .cloned()
        .unwrap_or_else(|| panic!("no activation review for the allergy: {queue}"));
    let review_id = item["id"].as_str().unwrap();
    let path = format!("/v1/admin/reviews/{review_id}/resolve");
    let resolve = |action: &str| app.call("POST", &path, Some(ADMIN_KEY), Some(json!({"action": action})));
    let (status, refused) = resolve("confirm").await;
    assert_eq!(status, StatusCode::CONFLICT, "an activation review is approved or rejected: {refused}");
    let (status, resolved) = resolve("approve").await;
    assert_eq!(status, StatusCode::OK, "{resolved}");
    let third = start(&app, &host, aditya.clone(), &[]).await;
    assert!(ids(&third["profile"]).contains(&allergy), "{third}");
    assert!(third["profile"]["text"].as_str().unwrap().contains("[health] Aditya is allergic to peanuts."));

    // A project convention is ambient only in that project's sessions.
    let mut in_project = aditya.clone();
    in_project["project_id"] = json!("retold");
    let project = start(&app, &host, in_project, &[]).await;
    assert!(ids(&project["profile"]).contains(&convention), "{project}");
    let why = project["profile"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["record_id"] == convention.as_str());
    assert!(why.unwrap()["why"].as_str().unwrap().contains("conditional, project:retold holds"), "{project}");
    let mut elsewhere = aditya.clone();
    elsewhere["project_id"] = json!("other");
    assert!(!ids(&start(&app, &host, elsewhere, &[]).await["profile"]).contains(&convention));
    assert!(!ids(&third["profile"]).contains(&convention));
    // … or when the host passes the tag.
    assert!(
        ids(&start(&app, &host, aditya.clone(), &["project:retold"]).await["profile"]).contains(&convention)
    );

    // A fact about the user kept in a project scope the agent reads is about the principal
    // too (its subject is the user's entity); it is not about Bob, who reads the same scope.
    app.grant("research-agent", "project:retold", true, true).await;
    let mut shared = fact("aditya", "editor", "Aditya edits in Helix.", "system");
    shared["scope"] = json!("project:retold");
    let shared = write(&app, &host, shared).await;
    assert!(ids(&start(&app, &host, aditya.clone(), &[]).await["profile"]).contains(&shared));
    // A fact about someone else there is not Aditya's, even when Aditya's records mention them.
    let mut about_priya =
        fact("aditya", "manager_style", "Priya manages Aditya's team with weekly syncs.", "system");
    about_priya["subject"] = json!({"name": "Priya", "kind": "person"});
    write(&app, &host, about_priya).await;
    let mut priya = fact("aditya", "editor", "Priya edits in Emacs.", "system");
    priya["subject"] = json!({"name": "Priya", "kind": "person"});
    priya["scope"] = json!("project:retold");
    let priya = write(&app, &host, priya).await;
    assert!(!ids(&start(&app, &host, aditya.clone(), &[]).await["profile"]).contains(&priya));
    assert!(
        !ids(&start(&app, &host, principal("research-agent", "bob"), &[]).await["profile"]).contains(&shared)
    );

    // A superseded fact leaves the next profile, but not the one already issued.
    let newer = write(&app, &host, fact("aditya", "time_zone", "Aditya's time zone is PST.", "system")).await;
    let fourth = start(&app, &host, aditya.clone(), &[]).await;
    assert!(ids(&fourth["profile"]).contains(&newer) && !ids(&fourth["profile"]).contains(&zone), "{fourth}");
    let issued = second["id"].as_str().unwrap();
    let (status, again) = app
        .call(
            "GET",
            &format!("/v1/sessions/{issued}/profile?agent_id=research-agent&user_id=aditya"),
            Some(&host),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(&again, profile, "an issued profile never changes");
    let (_, withdrawn) =
        app.call("GET", &format!("/v1/admin/records/{zone}/events"), Some(ADMIN_KEY), None).await;
    assert!(
        withdrawn["events"].as_array().unwrap().iter().any(|e| e["kind"] == "activation.withdrawn"),
        "{withdrawn}"
    );
    // Another principal's session answers like a missing one.
    let (status, _) = app
        .call(
            "GET",
            &format!("/v1/sessions/{issued}/profile?agent_id=research-agent&user_id=bob"),
            Some(&host),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The inventory counts what search could read, by category and type, without content.
    let inventory = |who: Value| {
        let app = &app;
        let host = host.clone();
        async move {
            let (status, body) =
                app.call("POST", "/v1/memory/inventory", Some(&host), Some(json!({"principal": who}))).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body
        }
    };
    let mine = inventory(aditya.clone()).await;
    let count = |inv: &Value, name: &str| {
        inv["categories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .map_or(0, |c| c["count"].as_u64().unwrap())
    };
    assert_eq!(
        [
            count(&mine, "identity"),
            count(&mine, "communication"),
            count(&mine, "health"),
            count(&mine, "project_conventions")
        ],
        [1, 2, 2, 1],
        "{mine}"
    );
    assert_eq!(count(&mine, "tooling"), 2, "{mine}");
    // Eight memories and the session turn kept by turn memory (searchable, so counted); the
    // superseded time zone is not searchable.
    assert_eq!(mine["total"], 9, "{mine}");
    let shown = mine.to_string();
    for secret in ["peanuts", "Aditya", "mem_", "ent_", "time_zone"] {
        assert!(
            !shown.contains(secret),
            "the inventory carries no content, subjects or ids ({secret}): {shown}"
        );
    }
    // Another user reads only what the agent's grants let it: the shared project record.
    let carol = inventory(principal("research-agent", "carol")).await;
    assert_eq!((carol["total"].as_u64(), count(&carol, "tooling")), (Some(2), 2), "{carol}");
    let stranger = inventory(principal("other-agent", "carol")).await;
    assert_eq!(
        (stranger["total"].as_u64(), stranger["categories"].clone()),
        (Some(0), json!([])),
        "{stranger}"
    );

    // Erasing the user erases the profiles that quoted their records.
    let (status, erased) =
        app.call("POST", "/v1/admin/ops/erase", Some(ADMIN_KEY), Some(json!({"user_id": "aditya"}))).await;
    assert_eq!(status, StatusCode::OK, "{erased}");
    assert!(erased["removed"]["profiles"].as_u64().unwrap() >= 6, "{erased}");
    let (status, _) = app
        .call(
            "GET",
            &format!("/v1/sessions/{issued}/profile?agent_id=research-agent&user_id=aditya"),
            Some(&host),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(crate::operations::files_holding(&data, b"peanuts"), Vec::<String>::new());
}

#[tokio::test]
async fn the_budget_cuts_whole_records() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(dir, &[("RETOLD__ACTIVATION__PROFILE_TOKEN_BUDGET", "40")]).await;
    let host = app.host_key(&[]).await;
    app.grant("research-agent", "user:aditya", true, true).await;
    let contents = [
        ("editor", "Aditya edits code in Neovim with a minimal configuration."),
        ("shell", "Aditya works in the fish shell on every machine he uses."),
        ("time_zone", "Aditya's time zone is Central European Time."),
    ];
    for (attribute, content) in contents {
        write(&app, &host, fact("aditya", attribute, content, "system")).await;
    }
    let session = start(&app, &host, principal("research-agent", "aditya"), &[]).await;
    let profile = &session["profile"];
    let text = profile["text"].as_str().unwrap();
    assert!(profile["tokens"].as_u64().unwrap() <= 40, "{profile}");
    assert!(profile["cut"].as_u64().unwrap() >= 1, "{profile}");
    let kept = ids(profile).len();
    assert!(kept >= 1, "{profile}");
    // Whole records: every line is a complete record, and each kept record's content is whole.
    let whole = contents.iter().filter(|(_, c)| text.contains(c)).count();
    assert_eq!(whole, kept, "{text}");
    assert_eq!(text.lines().count(), kept + 1, "{text}");
}
