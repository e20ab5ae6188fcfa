//! The entity channel skips an entity linked to much of what the principal can see (a
//! conversation's speaker): it says nothing about which of those records a query wants.

use retold_domain::{Channel, EntityKind, Name, RecordId};
use retold_ingest::EntityRef;
use retold_retrieve::{RetrieveConfig, SearchRequest};

use crate::{about, episode, principal, request, world};

async fn entity_hits(config: RetrieveConfig) -> Vec<String> {
    let w = world(config).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    for n in 0..120 {
        w.write(&p, about(request("project:chat", &format!("Mel said line {n} of the chat.")), "Mel")).await;
    }
    for n in 0..3 {
        w.write(&p, about(request("project:chat", &format!("Zoe booked flight {n}.")), "Zoe")).await;
    }
    let response = w.search(&p, SearchRequest::new("What did Mel tell Zoe?")).await;
    let trace = w.trace(&response.search_id).await;
    trace["channels"][Channel::Entity.as_str()]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["detail"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_speaker_linked_to_most_records_does_not_flood_the_entity_channel() {
    let listing = RetrieveConfig { entity_broad_corroborates: false, ..RetrieveConfig::default() };
    let entity = entity_hits(listing.clone()).await;
    assert_eq!(entity.len(), 3, "only Zoe's records: Mel is linked to 120 of 123 ({entity:?})");
    let all = entity_hits(RetrieveConfig { entity_max_share: 1.0, ..listing }).await;
    assert_eq!(all.len(), 50, "with every entity kept, Mel's records fill the channel");
}

/// The entity channel's ids and details for `query` over Mel's 120 lines, one of which
/// mentions the lighthouse, and one record about the lighthouse that is not Mel's; and the
/// id of Mel's lighthouse line.
async fn corroborated(config: RetrieveConfig, query: &str) -> (Vec<(String, String)>, String) {
    let w = world(config).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    let mut lighthouse = String::new();
    for n in 0..120 {
        let line = if n == 60 {
            "Mel said the lighthouse tour was her favourite.".to_owned()
        } else {
            format!("Mel said line {n} of the chat.")
        };
        let id = w.write(&p, about(request("project:chat", &line), "Mel")).await;
        if n == 60 {
            lighthouse = id.to_string();
        }
    }
    w.write(&p, request("project:chat", "The lighthouse closes in winter.")).await;
    let response = w.search(&p, SearchRequest::new(query)).await;
    let trace = w.trace(&response.search_id).await;
    let listed = trace["channels"][Channel::Entity.as_str()]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["record_id"].as_str().unwrap().to_owned(), c["detail"].as_str().unwrap().to_owned()))
        .collect();
    (listed, lighthouse)
}

#[tokio::test]
async fn a_broad_entity_the_query_names_corroborates_what_the_other_channels_found() {
    let on = RetrieveConfig::default();
    assert!(on.entity_broad_corroborates, "on by default");
    let (named, lighthouse) = corroborated(on.clone(), "What did Mel say about the lighthouse?").await;
    // Mel is broad (120 of 121 records), so the channel lists only Mel's records another
    // channel found, best first: the lighthouse line leads; the record about the lighthouse
    // that is not Mel's (which the other channels may rank first) never appears.
    assert!(!named.is_empty() && named.len() <= 50, "{named:?}");
    assert_eq!(named[0].0, lighthouse, "{named:?}");
    assert!(named.iter().all(|(_, d)| d.contains("broad")), "{named:?}");
    let off = RetrieveConfig { entity_broad_corroborates: false, ..RetrieveConfig::default() };
    let (off, _) = corroborated(off, "What did Mel say about the lighthouse?").await;
    assert!(off.is_empty(), "off: a broad entity contributes nothing ({off:?})");
    let (unnamed, _) = corroborated(on, "What about the lighthouse?").await;
    assert!(unnamed.is_empty(), "a query that names no entity gets no entity candidates ({unnamed:?})");
}

/// A chat turn in `project:chat`, episodic and about its speaker, as a host writes one.
fn turn(line: &str, speaker: &str) -> retold_ingest::WriteRequest {
    about(episode("project:chat", line), speaker)
}

/// Where `one` and each of `others` are among the results for `query`.
async fn positions(
    w: &retold_test_kit::World,
    p: &retold_domain::Principal,
    query: &str,
    one: &retold_domain::RecordId,
    others: &[retold_domain::RecordId],
) -> (Option<usize>, Vec<usize>) {
    let found = crate::ids(&w.search(p, SearchRequest::new(query)).await);
    let at = |id: &retold_domain::RecordId| found.iter().position(|f| f == id);
    (at(one), others.iter().filter_map(at).collect())
}

/// Positions of Mel's violin line and of Zoe's lines about instruments among the results
/// for "What instruments does Mel play?", in a chat where both speakers are broad (each is
/// linked to more records than one channel returns).
async fn speaker_ranks(config: RetrieveConfig) -> (Option<usize>, Vec<usize>) {
    let w = world(config).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    let mut zoe_lines = Vec::new();
    for n in 0..60 {
        w.write(&p, turn(&format!("Zoe: Line {n} of the chat."), "Zoe")).await;
    }
    for line in [
        "Zoe: Do you play any instruments, Mel?",
        "Zoe: I play the drums in a band on Fridays.",
        "Zoe: Which instruments would you like to learn to play?",
    ] {
        zoe_lines.push(w.write(&p, turn(line, "Zoe")).await);
    }
    for n in 0..80 {
        w.write(&p, turn(&format!("Mel: Line {n} of the chat."), "Mel")).await;
    }
    let violin = w
        .write(
            &p,
            turn(
                "Mel: Busy week. I went running, read a novel and practised my violin every evening.",
                "Mel",
            ),
        )
        .await;
    positions(&w, &p, "What instruments does Mel play?", &violin, &zoe_lines).await
}

#[tokio::test]
async fn a_question_that_names_a_speaker_ranks_that_speakers_line_above_the_others_alike_lines() {
    // The shipped fusion weighs the entity channel twice: Mel's own line, which shares no
    // word with the question but "Mel", ranks above Zoe's lines that share its words.
    let shipped = RetrieveConfig::default();
    assert_eq!(shipped.fusion_weights.entity, 2.0);
    let (violin, zoe) = speaker_ranks(shipped.clone()).await;
    let violin = violin.expect("Mel's violin line is returned");
    assert!(zoe.iter().all(|&z| violin < z), "Mel's line at {violin}, Zoe's at {zoe:?}");
    // The seed's plain RRF leaves it below at least one of them.
    let plain = RetrieveConfig { fusion_weights: retold_retrieve::FusionWeights::default(), ..shipped };
    let (violin, zoe) = speaker_ranks(plain).await;
    assert!(
        zoe.iter().any(|&z| violin.is_none_or(|v| z < v)),
        "plain: Mel's line at {violin:?}, Zoe's at {zoe:?}"
    );
}

/// A transcript written as a host writes one: each turn about its speaker, the user ("u")
/// or the agent ("chat-agent"). The user said once what kit they keep, without the words
/// "drum set"; the agent's three replies repeat them. Returns the position of the user's line and of the agent's.
async fn pronoun_ranks(
    config: RetrieveConfig,
    query: &str,
    user_lines: usize,
) -> (Option<usize>, Vec<usize>) {
    let w = world(config).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    for n in 0..60 {
        w.write(&p, turn(&format!("Here is answer {n} of the chat."), "chat-agent")).await;
    }
    let mine = w.write(&p, turn("I still keep my old Pearl Export kit in the garage.", "u")).await;
    let mut echoes = Vec::new();
    for line in [
        "A Pearl drum set is a great kit! I recommend a drum set cleaning cloth.",
        "To sell a Pearl drum set, photograph the drum set in daylight.",
        "Pearl drum sets hold their value; a drum set tuner helps.",
    ] {
        echoes.push(w.write(&p, turn(line, "chat-agent")).await);
    }
    // The user's other lines, written after: the newest records about the user.
    for n in 0..user_lines {
        w.write(&p, turn(&format!("I asked question {n} of the chat."), "u")).await;
    }
    positions(&w, &p, query, &mine, &echoes).await
}

#[tokio::test]
async fn a_question_in_the_first_person_ranks_the_users_own_turn_above_the_agents_replies() {
    let shipped = RetrieveConfig::default();
    assert!(shipped.pronouns, "on by default");
    let off = RetrieveConfig { pronouns: false, ..shipped.clone() };
    // With 60 lines the user is broad; with 5 the user's entity is narrow, and its newest
    // lines must not be listed ahead of what the question asks.
    for user_lines in [60, 5] {
        let (mine, echoes) = pronoun_ranks(shipped.clone(), "What drum set do I have?", user_lines).await;
        let mine = mine.expect("the user's turn is returned");
        assert_eq!(mine, 0, "{user_lines} lines: the user's turn leads, the agent's at {echoes:?}");
        // Off, the agent's replies, which hold the question's words, come first.
        let (mine, echoes) = pronoun_ranks(off.clone(), "What drum set do I have?", user_lines).await;
        assert!(echoes.iter().any(|&e| mine.is_none_or(|m| e < m)), "off: {mine:?}, {echoes:?}");
    }
    // In the second person the question asks what the agent said: its reply leads, where
    // with pronouns off the user's line, which holds more of the words, does.
    let query = "What did you say about the Pearl Export kit?";
    let (mine, echoes) = pronoun_ranks(shipped, query, 60).await;
    assert!(echoes.contains(&0), "on: the agent's reply leads ({echoes:?}; the user's at {mine:?})");
    let (mine, echoes) = pronoun_ranks(off, query, 60).await;
    assert_eq!(mine, Some(0), "off: the user's line leads ({echoes:?})");
}

/// The dense channel alone (no lexical or entity channel, no result control) for "What has
/// Mel painted?" over a chat of Mel's, in which one line says what she painted and twenty
/// say little but "Mel": the painting's position, and the search's notes.
async fn dense_rank(config: RetrieveConfig) -> (Option<usize>, String) {
    let w = world(config).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    for line in ["Zoe: Mel! So good to hear from you, Mel.", "Zoe: Mel, what have you been up to lately?"] {
        w.write(&p, turn(line, "Zoe")).await;
    }
    for n in 0..20 {
        w.write(&p, turn(&format!("Mel: Line {n} of the chat."), "Mel")).await;
    }
    let painting = w
        .write(&p, turn("Mel: The kids and I did a lake sunrise in watercolours last weekend.", "Mel"))
        .await;
    let mut search = SearchRequest::new("What has Mel painted?");
    search.limit = Some(30);
    search.channels =
        retold_retrieve::Channels { dense: true, lexical: false, entity: false, result_control: false };
    let response = w.search(&p, search).await;
    let notes = w.trace(&response.search_id).await["notes"].to_string();
    (crate::ids(&response).iter().position(|f| *f == painting), notes)
}

#[tokio::test]
async fn the_dense_channel_weighs_a_named_persons_name_down_so_what_is_asked_about_them_leads() {
    let shipped = RetrieveConfig::default();
    assert_eq!(shipped.dense_name_weight, 0.3);
    let (painting, notes) = dense_rank(shipped.clone()).await;
    assert_eq!(painting, Some(0), "the painting leads: {notes}");
    assert!(
        notes.contains("the people named (mel) weigh 0.3") && notes.contains("What has painted?"),
        "{notes}"
    );
    // Embedded as written, the name pulls the lines that say little but "Mel" above it.
    let written = RetrieveConfig { dense_name_weight: 1.0, ..shipped };
    let (painting, notes) = dense_rank(written).await;
    assert!(painting.is_none_or(|p| p >= 10), "as written, the painting at {painting:?}");
    assert!(!notes.contains("weigh"), "{notes}");
}

/// The provisioned embedder, logging the texts of each call.
struct Logged {
    inner: std::sync::Arc<retold_index::OnnxEmbedder>,
    calls: std::sync::Mutex<Vec<Vec<String>>>,
}

#[async_trait::async_trait]
impl retold_domain::Embedder for Logged {
    fn info(&self) -> &retold_domain::EmbeddingModelInfo {
        self.inner.info()
    }

    async fn embed(&self, texts: &[String]) -> retold_domain::Result<Vec<Vec<f32>>> {
        self.calls.lock().unwrap().push(texts.to_vec());
        self.inner.embed(texts).await
    }
}

/// The embedder's calls during one search for `query`, over a chat between the user ("u"),
/// when `user_known`, and Mel, under `config`; and the search's notes.
async fn query_embeddings(
    config: RetrieveConfig,
    query: &str,
    user_known: bool,
) -> (Vec<Vec<String>>, String) {
    let logged = std::sync::Arc::new(Logged {
        inner: retold_test_kit::embedder(),
        calls: std::sync::Mutex::new(Vec::new()),
    });
    let w = retold_test_kit::World::builder().embedder(logged.clone()).retrieve(config).build().await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    for n in 0..5 {
        w.write(&p, turn(&format!("Mel: Line {n} of the chat."), "Mel")).await;
        if user_known {
            w.write(&p, turn(&format!("I said line {n} of the chat."), "u")).await;
        }
    }
    logged.calls.lock().unwrap().clear();
    let response = w.search(&p, SearchRequest::new(query)).await;
    let notes = w.trace(&response.search_id).await["notes"].to_string();
    let calls = std::mem::take(&mut *logged.calls.lock().unwrap());
    (calls, notes)
}

#[tokio::test]
async fn a_query_and_itself_without_its_pronouns_share_one_embedding_call() {
    let shipped = RetrieveConfig::default();
    let strings = |texts: &[&str]| texts.iter().map(|t| t.to_string()).collect::<Vec<_>>();
    // "I" points at the user, whom the store knows: the rest was embedded beside the query.
    let (calls, notes) = query_embeddings(shipped.clone(), "What drum set do I have?", true).await;
    assert_eq!(calls, vec![strings(&["What drum set do I have?", "What drum set do have?"])]);
    assert!(notes.contains("the people named (i) weigh 0.3"), "{notes}");
    // The user unknown: the same one call, and the query vector is the query's alone.
    let (calls, notes) = query_embeddings(shipped.clone(), "What drum set do I have?", false).await;
    assert_eq!(calls, vec![strings(&["What drum set do I have?", "What drum set do have?"])]);
    assert!(!notes.contains("weigh"), "{notes}");
    // A name is known only after the lookup: its rest is embedded after the query.
    let (calls, notes) = query_embeddings(shipped.clone(), "What did Mel say?", true).await;
    assert_eq!(calls, vec![strings(&["What did Mel say?"]), strings(&["What did say?"])]);
    assert!(notes.contains("the people named (mel) weigh 0.3"), "{notes}");
    // A name and a pronoun: the pronoun-less guess is not the rest; the rest follows.
    let (calls, _) = query_embeddings(shipped.clone(), "What did Mel tell me?", true).await;
    assert_eq!(
        calls,
        vec![strings(&["What did Mel tell me?", "What did Mel tell"]), strings(&["What did tell"])]
    );
    // With `retrieval.pronouns` off no pronoun points anywhere: the query alone is embedded.
    let off = RetrieveConfig { pronouns: false, ..shipped };
    let (calls, _) = query_embeddings(off, "What drum set do I have?", true).await;
    assert_eq!(calls, vec![strings(&["What drum set do I have?"])]);
}

/// A store that holds many conversations: Joanna is one speaker of three, linked to a tenth
/// of the records (a narrow entity), and her research line is older than her small talk.
/// The question's words, not the lines' age, pick which of her records the channel lists.
#[tokio::test]
async fn a_narrow_speaker_s_records_rank_by_the_question_not_by_age() {
    let w = world(RetrieveConfig::default()).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    for n in 0..120 {
        w.write(&p, turn(&format!("Mel: Line {n} of the chat about the weekend."), "Mel")).await;
        w.write(&p, turn(&format!("Zoe: Line {n} of the chat about the weekend."), "Zoe")).await;
    }
    let research = w
        .write(
            &p,
            turn("Joanna: I spent the spring researching coral reef bleaching for my thesis.", "Joanna"),
        )
        .await;
    for n in 0..25 {
        w.write(&p, turn(&format!("Joanna: Line {n} of the chat about the weekend."), "Joanna")).await;
    }
    let response = w.search(&p, SearchRequest::new("What did Joanna research?")).await;
    assert_eq!(crate::ids(&response).first(), Some(&research));
    let trace = w.trace(&response.search_id).await;
    let listed = trace["channels"][Channel::Entity.as_str()].as_array().unwrap();
    assert_eq!(listed.len(), 26, "Joanna is narrow: all her records are listed ({listed:?})");
    assert_eq!(listed[0]["record_id"].as_str(), Some(research.as_str()), "{listed:?}");
    assert!(
        listed.iter().all(|c| c["detail"].as_str().unwrap().contains("of the other lists fused")),
        "{listed:?}"
    );
}

/// An operations agent's memory: a general fact *about* the payments service, and two
/// deploy failures that only *mention* it. Asked why a migration failed on the service, the
/// entity channel lists what the query's words found first (the failures), not the record
/// whose role is "about": a role says what a record is about, not whether it answers.
#[tokio::test]
async fn a_named_service_s_events_that_answer_outrank_a_general_fact_about_it() {
    let w = world(RetrieveConfig::default()).await;
    let p = principal("ops-agent", "dana");
    w.grant("ops-agent", "project:payments", true, true).await;
    let service =
        || EntityRef::Name { name: Name::new("payments-service").unwrap(), kind: EntityKind::Product };
    let mut fact =
        request("project:payments", "The payments service stores its data in PostgreSQL 15 in eu-west-1.");
    fact.subject = Some(service());
    let fact = w.write(&p, fact).await;
    let mut failures = Vec::new();
    for line in [
        "Deploy of payments-service v2.3.1 failed: migration 0042_add_refund_index timed out after 300 s.",
        "Deploy of payments-service v2.3.2 failed again: migration 0042_add_refund_index timed out; the \
         nightly VACUUM held the lock on refunds.",
    ] {
        let mut failure = episode("project:payments", line);
        failure.mentions = vec![service()];
        failures.push(w.write(&p, failure).await);
    }
    for line in [
        "Priya owns the schema migrations of the payments database.",
        "Before a long migration on the payments database, pause the nightly VACUUM job (runbook section 4).",
        "The office coffee machine on the third floor is broken again.",
    ] {
        w.write(&p, request("project:payments", line)).await;
    }
    let response = w.search(&p, SearchRequest::new("Why did migration 0042 fail on payments-service?")).await;
    let ids = crate::ids(&response);
    let at = |id: &RecordId| ids.iter().position(|r| r == id).unwrap();
    for failure in &failures {
        assert!(at(failure) < at(&fact), "a failure ranks above the general fact: {ids:?}");
    }
    let trace = w.trace(&response.search_id).await;
    let listed: Vec<&str> = trace["channels"][Channel::Entity.as_str()]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["record_id"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert_eq!(listed[2], fact.as_str(), "the fact is listed after the failures the words found: {listed:?}");
}
