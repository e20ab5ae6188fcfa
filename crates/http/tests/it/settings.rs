use std::io::Write;

use retold_http::{LogFormat, Pooling, Settings, SettingsError, Synchronous};

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn yaml_file(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file
}

fn error_text(result: Result<Settings, SettingsError>) -> String {
    match result {
        Ok(_) => panic!("expected the configuration to be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn defaults_hold_the_seed_values() {
    let s = Settings::load_with_env(None, env(&[])).unwrap();
    // The seed's worked example uses k = 60 (and `rrf_reproduces_the_seed_table` keeps it);
    // the shipped default is the measured one (config/default.yaml says why).
    assert_eq!(s.retrieval.rrf_k, 5);
    assert_eq!(s.retrieval.rewrite.model, "claude-haiku-4-5-20251001");
    assert!(!s.retrieval.rewrite.enabled);
    assert!(!s.retrieval.reranker.enabled);
    assert_eq!(s.retrieval.reranker.model, "cross-encoder/ms-marco-MiniLM-L-12-v2");
    assert_eq!(s.retrieval.reranker.placement, retold_http::RerankerPlacement::AfterGate);
    assert_eq!(s.embedding.model, "sentence-transformers/all-MiniLM-L6-v2");
    assert_eq!(s.embedding.dims, 384);
    assert_eq!(s.embedding.pooling, Pooling::Mean);
    assert_eq!(s.storage.synchronous, Synchronous::Normal);
    // The model-dependent thresholds come from the default model's calibration.
    let t = s.thresholds().unwrap();
    assert!(t.entail_floor > 0.0 && t.entail_floor < 1.0);
    assert_eq!(s.calibration().unwrap().model, s.embedding.model);
    assert!(s.ingestion.max_entity_attributes > 0);
    assert!(s.ingestion.reinforcements_to_confirm > 0);
    assert!(!s.ingestion.extraction_model.is_empty() && !s.ingestion.review_model.is_empty());
}

#[test]
fn a_file_overrides_defaults_and_keeps_the_rest() {
    let file = yaml_file(
        "retrieval:\n  rrf_k: 80\nembedding:\n  model: BAAI/bge-m3\n  dims: 1024\n  pooling: cls\n",
    );
    let s = Settings::load_with_env(Some(file.path()), env(&[])).unwrap();
    assert_eq!(s.retrieval.rrf_k, 80);
    assert_eq!(s.embedding.model, "BAAI/bge-m3");
    assert_eq!(s.embedding.dims, 1024);
    assert_eq!(s.embedding.pooling, Pooling::Cls);
    // Untouched keys keep their defaults.
    assert_eq!(
        s.retrieval.per_generator_k,
        Settings::load_with_env(None, env(&[])).unwrap().retrieval.per_generator_k
    );
}

#[test]
fn environment_overrides_the_file() {
    let file = yaml_file("retrieval:\n  rrf_k: 80\n");
    let s = Settings::load_with_env(
        Some(file.path()),
        env(&[
            ("RETOLD__RETRIEVAL__RRF_K", "90"),
            ("RETOLD__RETRIEVAL__GATE__DENSE_FLOOR", "0.42"),
            ("RETOLD__RETRIEVAL__REWRITE__ENABLED", "true"),
            ("RETOLD__SERVER__CORS_ORIGINS", "http://a.test,http://b.test"),
            ("RETOLD_UNRELATED", "ignored"),
        ]),
    )
    .unwrap();
    assert_eq!(s.retrieval.rrf_k, 90);
    assert_eq!(s.retrieval.gate.dense_floor, Some(0.42));
    assert_eq!(s.thresholds().unwrap().dense_floor, 0.42);
    assert!(s.retrieval.rewrite.enabled);
    assert_eq!(s.server.cors_origins, ["http://a.test", "http://b.test"]);
}

#[test]
fn an_out_of_range_value_is_refused_naming_its_key() {
    let text = error_text(Settings::load_with_env(None, env(&[("RETOLD__RETRIEVAL__RRF_K", "0")])));
    assert!(text.contains("retrieval.rrf_k"), "{text}");
    let text =
        error_text(Settings::load_with_env(None, env(&[("RETOLD__SERVER__IDEMPOTENCY_TTL_MS", "10")])));
    assert!(text.contains("server.idempotency_ttl_ms"), "{text}");
    let file = yaml_file("ingestion:\n  evidence:\n    entail_floor: 1.5\n");
    let text = error_text(Settings::load_with_env(Some(file.path()), env(&[])));
    assert!(text.contains("ingestion.evidence.entail_floor"), "{text}");
}

#[test]
fn a_wrong_type_or_unknown_key_is_refused_naming_it() {
    let text = error_text(Settings::load_with_env(None, env(&[("RETOLD__RETRIEVAL__RRF_K", "many")])));
    assert!(text.contains("rrf_k"), "{text}");
    let text = error_text(Settings::load_with_env(None, env(&[("RETOLD__EMBEDDING__POOLING", "max")])));
    assert!(text.contains("pooling"), "{text}");
    let file = yaml_file("retrieval:\n  rrf_kk: 3\n");
    let text = error_text(Settings::load_with_env(Some(file.path()), env(&[])));
    assert!(text.contains("rrf_kk"), "{text}");
}

#[test]
fn cross_field_rules_are_checked() {
    let text = error_text(Settings::load_with_env(
        None,
        env(&[("RETOLD__RETRIEVAL__DEFAULT_LIMIT", "60"), ("RETOLD__RETRIEVAL__MAX_LIMIT", "50")]),
    ));
    assert!(text.contains("retrieval.default_limit"), "{text}");
    let text = error_text(Settings::load_with_env(None, env(&[("RETOLD__AUTH__ADMIN_KEY_SHA256", "abc")])));
    assert!(text.contains("auth.admin_key_sha256"), "{text}");
    // Ranking or weighing by sentence vectors that no record gets would do nothing: refused,
    // not ignored.
    let text =
        error_text(Settings::load_with_env(None, env(&[("RETOLD__EMBEDDING__SENTENCE_VECTORS", "0")])));
    assert!(
        text.contains("retrieval.fusion.sentences") && text.contains("embedding.sentence_vectors"),
        "{text}"
    );
    let off =
        env(&[("RETOLD__EMBEDDING__SENTENCE_VECTORS", "0"), ("RETOLD__RETRIEVAL__FUSION__SENTENCES", "0")]);
    assert_eq!(Settings::load_with_env(None, off).unwrap().embedding.sentence_vectors, 0);
    // A list of the records inside the time a query names, with no time read from queries.
    let text = error_text(Settings::load_with_env(
        None,
        env(&[("RETOLD__RETRIEVAL__QUERY_TIME__ENABLED", "false")]),
    ));
    assert!(text.contains("retrieval.fusion.window") && text.contains("query_time"), "{text}");
    let no_time = env(&[
        ("RETOLD__RETRIEVAL__QUERY_TIME__ENABLED", "false"),
        ("RETOLD__RETRIEVAL__FUSION__WINDOW", "0"),
    ]);
    assert!(Settings::load_with_env(None, no_time).is_ok());
}

/// The default model's files (`embedding.model_dir` empty) are version 2's, computing in
/// int8 one text a run: a configuration that would serve them as version 1 (whose vectors an
/// older store holds) or in shared runs (vectors depending on the load) is refused; version 1
/// is served from its own directory, batched as before.
#[test]
fn the_default_model_files_are_served_only_as_themselves() {
    let text = error_text(Settings::load_with_env(None, env(&[("RETOLD__EMBEDDING__VERSION", "1")])));
    assert!(text.contains("embedding.version") && text.contains("all-minilm-l6-v2-int8"), "{text}");
    let text = error_text(Settings::load_with_env(None, env(&[("RETOLD__EMBEDDING__BATCH_SIZE", "32")])));
    assert!(text.contains("embedding.batch_size: 32"), "{text}");
    let pinned = retold_index::pinned_model_dir().display().to_string();
    let version_1 = env(&[
        ("RETOLD__EMBEDDING__VERSION", "1"),
        ("RETOLD__EMBEDDING__BATCH_SIZE", "32"),
        ("RETOLD__EMBEDDING__MODEL_DIR", pinned.as_str()),
    ]);
    let settings = Settings::load_with_env(None, version_1).unwrap();
    assert_eq!((settings.embedding.version, settings.embedding.batch_size), (1, 32));
    assert_eq!(retold_http::embedder_config(&settings).model_dir, retold_index::pinned_model_dir());
}

#[test]
fn a_missing_file_is_an_error() {
    let text =
        error_text(Settings::load_with_env(Some(std::path::Path::new("/nonexistent/retold.yaml")), env(&[])));
    assert!(text.contains("retold.yaml"), "{text}");
}

#[test]
fn the_write_path_defaults_come_from_the_yaml() {
    let s = Settings::load_with_env(None, env(&[])).unwrap();
    assert_eq!(retold_http::ingest_config(&s), retold_ingest::IngestConfig::default());
}

#[test]
fn provider_keys_come_from_configuration_or_the_providers_variables_and_never_show() {
    let s = Settings::load_with_env(None, env(&[("ANTHROPIC_API_KEY", "sk-ant-from-env")])).unwrap();
    assert_eq!(s.hosted.anthropic.api_key.expose(), "sk-ant-from-env");
    assert_eq!(s.hosted.openai.api_key.expose(), "", "no OPENAI_API_KEY given");
    let s = Settings::load_with_env(
        None,
        env(&[
            ("ANTHROPIC_API_KEY", "sk-ant-from-env"),
            ("RETOLD__HOSTED__ANTHROPIC__API_KEY", "sk-ant-configured"),
        ]),
    )
    .unwrap();
    assert_eq!(s.hosted.anthropic.api_key.expose(), "sk-ant-configured", "configuration wins");
    let shown = format!("{s:?}");
    assert!(!shown.contains("sk-ant-configured") && shown.contains("Secret(<redacted>)"), "{shown}");
    assert!(s.ingestion.extraction.enabled);
    assert_eq!(s.ingestion.extraction_model, "claude-sonnet-4-5-20250929");
    assert_eq!(s.ingestion.extraction.max_attempts, 3);
}

#[test]
fn hosted_settings_are_checked() {
    let text = error_text(Settings::load_with_env(
        None,
        env(&[
            ("RETOLD__HOSTED__OPENAI__BASE_URL", "api.openai.com"),
            ("RETOLD__HOSTED__BACKOFF_MAX_MS", "10"),
        ]),
    ));
    assert!(text.contains("hosted.openai.base_url: must start with https:// or http://"), "{text}");
    assert!(text.contains("hosted.backoff_max_ms: 10 is below hosted.backoff_ms 500"), "{text}");
}

#[test]
fn log_format_is_auto_by_default_and_checked() {
    let s = Settings::load_with_env(None, env(&[])).unwrap();
    assert_eq!(s.telemetry.log_format, LogFormat::Auto);
    let s = Settings::load_with_env(None, env(&[("RETOLD__TELEMETRY__LOG_FORMAT", "text")])).unwrap();
    assert_eq!(s.telemetry.log_format, LogFormat::Text);
    let text = error_text(Settings::load_with_env(None, env(&[("RETOLD__TELEMETRY__LOG_FORMAT", "xml")])));
    assert!(text.contains("log_format"), "{text}");
}

#[test]
fn auto_logs_text_on_a_terminal_and_json_otherwise() {
    assert!(!LogFormat::Auto.is_json(true));
    assert!(LogFormat::Auto.is_json(false));
    assert!(LogFormat::Json.is_json(true) && LogFormat::Json.is_json(false));
    assert!(!LogFormat::Text.is_json(true) && !LogFormat::Text.is_json(false));
}

/// `config/default.yaml` is the one place defaults are chosen: every inner crate's Rust
/// default (used by tests, the test kit and the evaluation harness) must equal what the
/// embedded YAML produces, so a change to one without the other fails here.
#[test]
fn every_inner_default_is_the_yaml_default() {
    let settings = Settings::load_with_env(None, env(&[])).unwrap();
    assert_eq!(retold_http::ingest_config(&settings), retold_ingest::IngestConfig::default());
    assert_eq!(retold_http::retrieve_config(&settings), retold_retrieve::RetrieveConfig::default());
    assert_eq!(retold_http::embedder_config(&settings), retold_index::OnnxEmbedderConfig::provisioned());
    assert_eq!(retold_http::reranker_config(&settings), retold_index::OnnxRerankerConfig::provisioned());
    assert_eq!(retold_http::operations_config(&settings), retold_app::OperationsConfig::default());
    let dir = std::path::Path::new("/var/lib/retold");
    assert_eq!(
        retold_http::store_config(&settings, dir),
        retold_store_sqlite::StoreConfig::new(dir.join(&settings.storage.sqlite_file))
    );
    assert_eq!(retold_http::postgres_config(&settings), retold_store_postgres::PostgresConfig::new(""));
}

#[test]
fn reranker_settings_reach_the_pipeline_and_bad_ones_are_refused() {
    let settings = Settings::load_with_env(
        None,
        env(&[
            ("RETOLD__RETRIEVAL__RERANKER__PLACEMENT", "instead_of_gate"),
            ("RETOLD__RETRIEVAL__RERANKER__CANDIDATES", "7"),
            ("RETOLD__RETRIEVAL__RERANKER__MAX_LENGTH", "128"),
        ]),
    )
    .unwrap();
    let config = retold_http::retrieve_config(&settings);
    assert_eq!(
        (config.reranker_placement, config.reranker_candidates),
        (retold_retrieve::RerankerPlacement::InsteadOfGate, 7)
    );
    assert_eq!(retold_http::reranker_config(&settings).max_length, 128);
    for (key, value, named) in [
        ("RETOLD__RETRIEVAL__RERANKER__CANDIDATES", "0", "candidates"),
        ("RETOLD__RETRIEVAL__RERANKER__MAX_LENGTH", "1024", "max_length"),
        ("RETOLD__RETRIEVAL__RERANKER__PLACEMENT", "first", "placement"),
    ] {
        let error = Settings::load_with_env(None, env(&[(key, value)])).unwrap_err();
        assert!(error.to_string().contains(named), "{key}={value}: {error}");
    }
}

#[test]
fn the_postgres_backend_needs_a_postgres_url() {
    let error = Settings::load_with_env(None, env(&[("RETOLD__STORAGE__BACKEND", "postgres")])).unwrap_err();
    assert!(error.to_string().contains("storage.url"), "{error}");
    let error = Settings::load_with_env(
        None,
        env(&[("RETOLD__STORAGE__BACKEND", "postgres"), ("RETOLD__STORAGE__URL", "mysql://x/y")]),
    )
    .unwrap_err();
    assert!(error.to_string().contains("postgres://"), "{error}");
    let settings = Settings::load_with_env(
        None,
        env(&[
            ("RETOLD__STORAGE__BACKEND", "postgres"),
            ("RETOLD__STORAGE__URL", "postgres://u:pw@db/retold"),
        ]),
    )
    .unwrap();
    assert!(!format!("{:?}", settings.storage).contains("pw"), "the URL's password is never shown");
    let error = Settings::load_with_env(None, env(&[("RETOLD__STORAGE__BACKEND", "mysql")])).unwrap_err();
    assert!(error.to_string().contains("backend"), "{error}");
}

#[test]
fn passage_tokens_reach_the_pipeline_and_bad_ones_are_refused() {
    let load =
        |value: &str| Settings::load_with_env(None, env(&[("RETOLD__RETRIEVAL__PASSAGE_TOKENS", value)]));
    assert_eq!(
        retold_http::retrieve_config(&Settings::load_with_env(None, env(&[])).unwrap()).passage_tokens,
        100
    );
    assert_eq!(retold_http::retrieve_config(&load("0").unwrap()).passage_tokens, 0, "0: whole records");
    assert_eq!(retold_http::retrieve_config(&load("250").unwrap()).passage_tokens, 250);
    for bad in ["5", "100001", "-1"] {
        let error = load(bad).unwrap_err().to_string();
        assert!(error.contains("passage_tokens"), "{bad}: {error}");
    }
}

#[test]
fn query_time_reaches_the_pipeline_and_a_boost_that_does_not_raise_is_refused() {
    let load = |vars: &[(&str, &str)]| Settings::load_with_env(None, env(vars));
    let shipped = retold_http::retrieve_config(&load(&[]).unwrap());
    assert_eq!(shipped.query_time_boost, Some(2.0));
    let off = load(&[
        ("RETOLD__RETRIEVAL__QUERY_TIME__ENABLED", "false"),
        ("RETOLD__RETRIEVAL__FUSION__WINDOW", "0"),
    ])
    .unwrap();
    assert_eq!(retold_http::retrieve_config(&off).query_time_boost, None, "off reads no time from queries");
    let three = load(&[("RETOLD__RETRIEVAL__QUERY_TIME__BOOST", "3.5")]).unwrap();
    assert_eq!(retold_http::retrieve_config(&three).query_time_boost, Some(3.5));
    assert_eq!(shipped.asks_when_boost, 2.0);
    assert_eq!(
        retold_http::retrieve_config(&off).asks_when_boost,
        1.0,
        "off: questions that ask when rank as any"
    );
    let neutral = load(&[("RETOLD__RETRIEVAL__QUERY_TIME__ASKS_WHEN_BOOST", "1.0")]).unwrap();
    assert_eq!(retold_http::retrieve_config(&neutral).asks_when_boost, 1.0);
    let error = load(&[("RETOLD__RETRIEVAL__QUERY_TIME__ASKS_WHEN_BOOST", "0.9")]).unwrap_err().to_string();
    assert!(error.contains("asks_when_boost"), "{error}");
    for bad in ["1.0", "0.5", "101"] {
        let error = load(&[("RETOLD__RETRIEVAL__QUERY_TIME__BOOST", bad)]).unwrap_err().to_string();
        assert!(error.contains("boost"), "{bad}: {error}");
    }
}

#[test]
fn newer_first_reaches_the_pipeline_and_off_leaves_the_order_to_the_scores() {
    let load = |vars: &[(&str, &str)]| Settings::load_with_env(None, env(vars));
    let shipped = retold_http::retrieve_config(&load(&[]).unwrap());
    assert_eq!(
        shipped.newer_first,
        Some(retold_retrieve::NewerFirst { similarity: 0.4, score_share: 0.5, head: 5 })
    );
    let off = load(&[("RETOLD__RETRIEVAL__FRESHNESS__NEWER_FIRST__ENABLED", "false")]).unwrap();
    assert_eq!(retold_http::retrieve_config(&off).newer_first, None);
    let wider = load(&[("RETOLD__RETRIEVAL__FRESHNESS__NEWER_FIRST__HEAD", "10")]).unwrap();
    assert_eq!(retold_http::retrieve_config(&wider).newer_first.map(|r| r.head), Some(10));
    // The key a removed rule had is refused, not silently ignored.
    assert!(load(&[("RETOLD__RETRIEVAL__FRESHNESS__NEWER_FIRST__PERSON_UPDATE", "false")]).is_err());
    for (var, bad) in [("SIMILARITY", "1.5"), ("SCORE_SHARE", "-0.1"), ("HEAD", "1"), ("HEAD", "51")] {
        let name = format!("RETOLD__RETRIEVAL__FRESHNESS__NEWER_FIRST__{var}");
        let error = load(&[(&name, bad)]).unwrap_err().to_string();
        assert!(error.contains(&var.to_lowercase()), "{var}={bad}: {error}");
    }
}

#[test]
fn lexical_stemming_reaches_the_pipeline_and_an_unknown_mode_is_refused() {
    use retold_retrieve::LexicalStemming;
    let load = |vars: &[(&str, &str)]| Settings::load_with_env(None, env(vars));
    let stemming =
        |vars: &[(&str, &str)]| retold_http::retrieve_config(&load(vars).unwrap()).lexical_stemming;
    assert_eq!(stemming(&[]), LexicalStemming::Unmatched);
    assert_eq!(stemming(&[("RETOLD__RETRIEVAL__LEXICAL_STEMMING", "all")]), LexicalStemming::All);
    assert_eq!(stemming(&[("RETOLD__RETRIEVAL__LEXICAL_STEMMING", "off")]), LexicalStemming::Off);
    let error = load(&[("RETOLD__RETRIEVAL__LEXICAL_STEMMING", "true")]).unwrap_err().to_string();
    assert!(error.contains("lexical_stemming"), "{error}");
}

/// `retrieval.<field>` (set as `RETOLD__RETRIEVAL__<FIELD>`) refuses what is not a share in
/// [0, 1], naming the field.
fn refuses_non_shares(field: &str) {
    let var = format!("RETOLD__RETRIEVAL__{}", field.to_uppercase());
    for bad in ["1.5", "-0.1", "NaN", "half"] {
        let Err(error) = Settings::load_with_env(None, env(&[(&var, bad)])) else {
            panic!("{field}: {bad} was taken")
        };
        let error = error.to_string();
        assert!(error.contains(field), "{bad}: {error}");
    }
}

#[test]
fn dense_centring_reaches_the_pipeline_and_a_share_outside_zero_to_one_is_refused() {
    let load = |vars: &[(&str, &str)]| Settings::load_with_env(None, env(vars));
    let centring =
        |vars: &[(&str, &str)]| retold_http::retrieve_config(&load(vars).unwrap()).dense_centring.share();
    assert_eq!(centring(&[]), 1.0);
    assert_eq!(centring(&[("RETOLD__RETRIEVAL__DENSE_CENTRING", "0")]), 0.0);
    assert_eq!(centring(&[("RETOLD__RETRIEVAL__DENSE_CENTRING", "0.5")]), 0.5);
    refuses_non_shares("dense_centring");
}

#[test]
fn the_dense_name_weight_is_shipped_at_0_3_reaches_the_pipeline_and_is_a_share() {
    let load = |vars: &[(&str, &str)]| Settings::load_with_env(None, env(vars));
    let weight = |vars: &[(&str, &str)]| retold_http::retrieve_config(&load(vars).unwrap()).dense_name_weight;
    assert_eq!(weight(&[]), 0.3);
    assert_eq!(weight(&[("RETOLD__RETRIEVAL__DENSE_NAME_WEIGHT", "1")]), 1.0);
    refuses_non_shares("dense_name_weight");
}

#[test]
fn sentence_vectors_are_shipped_on_and_reach_the_write_path_and_the_pipeline() {
    let load = |vars: &[(&str, &str)]| Settings::load_with_env(None, env(vars)).unwrap();
    let list = |s: &Settings| retold_http::retrieve_config(s).fusion_weights.sentences;
    let shipped = load(&[]);
    // Shipped: the sentence list in the fusion (the record list ranks by the record's own
    // vector; there is no other way to mix sentences in).
    assert_eq!((list(&shipped), retold_http::ingest_config(&shipped).sentence_vectors), (1.0, 16));
    let tuned = load(&[
        ("RETOLD__RETRIEVAL__FUSION__SENTENCES", "0.5"),
        ("RETOLD__EMBEDDING__SENTENCE_VECTORS", "4"),
    ]);
    assert_eq!((list(&tuned), retold_http::ingest_config(&tuned).sentence_vectors), (0.5, 4));
    // The sentence weight of earlier versions is gone: a configuration that still sets it is
    // refused at start, naming it, never silently ignored.
    let file = yaml_file("retrieval:\n  dense_sentence_weight: 0.5\n");
    let text = error_text(Settings::load_with_env(Some(file.path()), env(&[])));
    assert!(text.contains("dense_sentence_weight"), "{text}");
    let Err(error) = Settings::load_with_env(None, env(&[("RETOLD__EMBEDDING__SENTENCE_VECTORS", "1000")]))
    else {
        panic!("1000 sentence vectors a record were taken")
    };
    assert!(error.to_string().contains("embedding.sentence_vectors"), "{error}");
}

#[test]
fn substance_is_off_by_default_and_reaches_the_pipeline_when_on() {
    let load = |vars: &[(&str, &str)]| Settings::load_with_env(None, env(vars));
    let shipped = retold_http::retrieve_config(&load(&[]).unwrap());
    assert_eq!(shipped.substance, None, "shipped off: a trade between the dev sets");
    let on = load(&[("RETOLD__RETRIEVAL__SUBSTANCE__ENABLED", "true")]).unwrap();
    assert_eq!(
        retold_http::retrieve_config(&on).substance,
        Some(retold_retrieve::Substance { words: 20, floor: 0.3 })
    );
    let tuned = load(&[
        ("RETOLD__RETRIEVAL__SUBSTANCE__ENABLED", "true"),
        ("RETOLD__RETRIEVAL__SUBSTANCE__WORDS", "12"),
        ("RETOLD__RETRIEVAL__SUBSTANCE__FLOOR", "0.5"),
    ])
    .unwrap();
    assert_eq!(
        retold_http::retrieve_config(&tuned).substance,
        Some(retold_retrieve::Substance { words: 12, floor: 0.5 })
    );
    for (var, bad) in [("WORDS", "0"), ("WORDS", "1001"), ("FLOOR", "1.5"), ("FLOOR", "-0.1")] {
        let name = format!("RETOLD__RETRIEVAL__SUBSTANCE__{var}");
        let error = load(&[(&name, bad)]).unwrap_err().to_string();
        assert!(error.contains(&var.to_lowercase()), "{var}={bad}: {error}");
    }
}

#[test]
fn the_entity_weight_and_pronouns_are_shipped_on_and_reach_the_pipeline() {
    let load = |vars: &[(&str, &str)]| Settings::load_with_env(None, env(vars));
    let shipped = retold_http::retrieve_config(&load(&[]).unwrap());
    assert_eq!(shipped.fusion_weights.entity, 2.0, "the measured weight");
    assert!(shipped.pronouns, "a first-person question names the user");
    assert_eq!(shipped.fusion_weights.sentences, 1.0);
    assert_eq!(shipped.fusion_weights.window, 0.75);
    let off = load(&[
        ("RETOLD__RETRIEVAL__PRONOUNS", "false"),
        ("RETOLD__RETRIEVAL__FUSION__ENTITY", "1.0"),
        ("RETOLD__RETRIEVAL__FUSION__SENTENCES", "0"),
        ("RETOLD__RETRIEVAL__FUSION__WINDOW", "0"),
    ]);
    let off = retold_http::retrieve_config(&off.unwrap());
    assert!(!off.pronouns);
    assert_eq!(off.fusion_weights, retold_retrieve::FusionWeights::default(), "the seed's plain RRF");
    let error = load(&[("RETOLD__RETRIEVAL__PRONOUNS", "sometimes")]).unwrap_err().to_string();
    assert!(error.contains("pronouns"), "{error}");
}
