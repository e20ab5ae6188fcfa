//! Unit tests of the pure parts: RRF and query analysis.

use retold_domain::RecordId;

use crate::fusion::{rrf, weighted_rrf};
use retold_domain::text::is_identifier;

use crate::query::{lexical_terms, name_phrases};

fn id(s: &str) -> RecordId {
    RecordId::new(format!("mem_{s}")).unwrap()
}

#[test]
fn rrf_reproduces_the_seed_table() {
    let lexical = vec![id("A"), id("B"), id("C")];
    let dense = vec![id("C"), id("A"), id("D")];
    let fused = rrf(&[lexical, dense], 60);
    let rounded: Vec<(String, String)> = fused
        .iter()
        .map(|(id, s)| (id.as_str().trim_start_matches("mem_").to_owned(), format!("{s:.5}")))
        .collect();
    let expected = [("A", "0.03252"), ("C", "0.03227"), ("B", "0.01613"), ("D", "0.01587")];
    assert_eq!(rounded, expected.map(|(a, b)| (a.to_owned(), b.to_owned())));
}

#[test]
fn weighted_rrf_with_unit_weights_is_the_seeds_rrf_and_a_weight_scales_its_lists_share() {
    let lexical = vec![id("A"), id("B"), id("C")];
    let dense = vec![id("C"), id("A"), id("D")];
    let plain = rrf(&[lexical.clone(), dense.clone()], 60);
    assert_eq!(weighted_rrf(&[(1.0, &lexical), (1.0, &dense)], 60), plain);
    // Dense counts twice: C (dense rank 1) now leads A (lexical rank 1), and D passes B.
    let fused = weighted_rrf(&[(1.0, &lexical), (2.0, &dense)], 60);
    let order: Vec<&str> = fused.iter().map(|(id, _)| id.as_str().trim_start_matches("mem_")).collect();
    assert_eq!(order, ["C", "A", "D", "B"]);
    assert!((fused[0].1 - (1.0 / 63.0 + 2.0 / 61.0)).abs() < 1e-12);
    // A weight of zero removes a list's influence but keeps its records as candidates.
    let fused = weighted_rrf(&[(1.0, &lexical), (0.0, &dense)], 60);
    let order: Vec<&str> = fused.iter().map(|(id, _)| id.as_str().trim_start_matches("mem_")).collect();
    assert_eq!(order, ["A", "B", "C", "D"]);
}

#[test]
fn a_record_in_three_lists_gets_three_contributions() {
    let fused = rrf(&[vec![id("A")], vec![id("A")], vec![id("A")]], 60);
    assert!((fused[0].1 - 3.0 / 61.0).abs() < 1e-12);
}

#[test]
fn identifiers_are_detected_on_raw_tokens() {
    for yes in [
        "crates/http/src/lib.rs",
        "explanation_style",
        "std::io::Error",
        "E0277",
        "mem_01J9K4",
        "config.yaml",
        "getUserName",
        "v2.26",
        "\"OAuth2\"",
    ] {
        assert!(is_identifier(yes), "{yes}");
    }
    for no in ["hello", "OAuth", "a", "Hello,", "--", "x."] {
        assert!(!is_identifier(no), "{no}");
    }
}

#[test]
fn lexical_terms_follow_the_seed_steps() {
    let terms =
        lexical_terms("What does the OAuth refresh failure in crates/http/src/lib.rs mean? E0277 a C");
    let texts: Vec<(&str, bool)> = terms.iter().map(|t| (t.text.as_str(), t.identifier)).collect();
    assert_eq!(
        texts,
        [
            ("oauth", false),
            ("refresh", false),
            ("failure", false),
            ("crates/http/src/lib.rs", true),
            ("mean", false),
            ("E0277", true),
            ("c", false),
        ]
    );
    assert!(lexical_terms("the of and is").is_empty());
}

#[test]
fn quantifiers_are_function_words_and_name_no_topic() {
    // "many" and "much", like "few", "more" and "most", say how much of something, not what.
    let texts = |q: &str| lexical_terms(q).into_iter().map(|t| t.text).collect::<Vec<_>>();
    assert_eq!(texts("How many bikes do I ride?"), ["bikes", "ride"]);
    assert_eq!(texts("And how much did the tickets cost?"), ["tickets", "cost"]);
    assert_eq!(texts("Which of my many bikes is the oldest?"), ["bikes", "oldest"]);
    assert_eq!(
        texts("Too many retries on db-prod-3, much more than usual"),
        ["retries", "db-prod-3", "usual"]
    );
}

#[test]
fn stopwords_are_sorted_for_lookup() {
    // binary_search needs it; a wrongly placed word would silently stop being removed.
    assert!(retold_domain::text::STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    let terms = lexical_terms("yourselves about above");
    assert!(terms.is_empty(), "{terms:?}");
}

#[test]
fn name_phrases_cover_multi_word_aliases_and_possessives() {
    let phrases = name_phrases("what did the memory system ship for Aditya's team?");
    assert!(phrases.contains(&"memory system".to_owned()));
    assert!(phrases.contains(&"Aditya".to_owned()));
    assert!(!phrases.contains(&"the".to_owned()));
}

#[test]
fn a_rewrite_may_only_use_names_from_the_query_and_context() {
    let stemmer = retold_index::SnowballEnglish::new();
    let introduced_values = |phrase: &str, query: &str, context: &[String]| {
        crate::rewrite::introduced_values(phrase, query, context, &stemmer)
    };
    let context = vec!["user: Aditya asked for concise technical explanations.".to_owned()];
    let none: Vec<String> = Vec::new();
    assert_eq!(
        introduced_values("Aditya's preferred explanation style", "what does he prefer?", &context),
        none
    );
    assert_eq!(
        introduced_values("What Aditya prefers", "what does he prefer?", &context),
        none,
        "stopwords are not names"
    );
    assert_eq!(
        introduced_values("Priya's preferred explanation style", "what does he prefer?", &context),
        vec!["priya".to_owned()]
    );
    assert_eq!(
        introduced_values("Aditya's preference since 2024", "what does he prefer?", &context),
        vec!["2024".to_owned()]
    );
    assert_eq!(
        introduced_values("aditya explanation style", "what does he prefer?", &[]),
        none,
        "lowercase words are not names"
    );
    assert_eq!(
        introduced_values("Explanation styles Aditya prefers", "what does he prefer?", &context),
        none,
        "a capitalised first word and a plural of known words"
    );
    assert_eq!(
        introduced_values("Explaining Aditya's preferences", "what does he prefer?", &context),
        vec!["explaining".to_owned()],
        "a word that shares only its first letters with a known one is new"
    );
    assert_eq!(
        introduced_values("Explanations Preferred by Aditya", "what does he prefer?", &context),
        none,
        "an inflection of a known word (Preferred, prefer) is known wherever it stands"
    );
    assert_eq!(
        introduced_values("the Priyanka preference", "what does Priya prefer?", &[]),
        vec!["priyanka".to_owned()],
        "names are matched whole"
    );
}

#[test]
fn a_question_is_in_the_first_or_second_person_only_when_it_is_in_one_alone() {
    use crate::query::{Person, person};
    assert_eq!(person("How many bikes do I own?"), Some(Person::First));
    assert_eq!(person("Where did I put my keys?"), Some(Person::First));
    assert_eq!(person("what's the name of the café I've been to"), Some(Person::First));
    assert_eq!(person("Remind me of the hotel"), Some(Person::First));
    assert_eq!(person("What did you suggest for dinner?"), Some(Person::Second));
    assert_eq!(
        person("Which recipe were you\u{2019}re talking about, yours or Anna's?"),
        Some(Person::Second)
    );
    assert_eq!(person("What did you all decide among yourselves?"), Some(Person::Second));
    // Both, or neither.
    assert_eq!(person("Can you remind me what I said about Paris?"), None);
    assert_eq!(person("What did Mel say about the lighthouse?"), None);
    // A pronoun only as a whole word: not inside a name, a compound or an identifier.
    for query in [
        "Who is Yourcenar, and what did Imelda write?",
        "Mine-sweeper scores",
        "a do-it-yourself shelf",
        "where is my_config read",
        "the I/O error, i.e. the disk",
        "Is iOS 17 out?",
    ] {
        assert_eq!(person(query), None, "{query}");
    }
}

#[test]
fn a_query_without_its_names_keeps_every_other_word() {
    use crate::query::without_names;
    let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        without_names("What has Melanie painted?", &names(&["melanie"])).as_deref(),
        Some("What has painted?")
    );
    // A possessive, punctuation, and a name of two words, matched as a phrase.
    assert_eq!(
        without_names("Where did Mel's sister and Anna Lee, go?", &names(&["mel", "anna lee"])).as_deref(),
        Some("Where did sister and go?")
    );
    // Folded: case does not matter; only whole words match ("Melanie" holds "mel").
    assert_eq!(
        without_names("what did MELANIE bake", &names(&["melanie"])).as_deref(),
        Some("what did bake")
    );
    assert_eq!(without_names("What did Melanie bake?", &names(&["mel"])), None);
    // Nothing named, or nothing else left: the query stays as written.
    assert_eq!(without_names("What did she bake?", &names(&["melanie"])), None);
    assert_eq!(without_names("Melanie?", &names(&["melanie"])), None);
    assert_eq!(without_names("What has Melanie painted?", &[]), None);
}

#[test]
fn a_questions_pronouns_are_read_whole_with_their_person() {
    use crate::query::{Person, pronoun_words, without_names};
    let words = pronoun_words("Which of my bikes have I ridden since you said I'd sell it?");
    let first: Vec<String> =
        words.iter().filter(|(_, p)| *p == Person::First).map(|(w, _)| w.clone()).collect();
    assert_eq!(first, ["my", "i", "i'd"]);
    assert!(words.iter().any(|(w, p)| w == "you" && *p == Person::Second));
    let query = "How many bikes do I own, and where have I've put my helmet?";
    let mine: Vec<String> = pronoun_words(query).into_iter().map(|(w, _)| w).collect();
    assert_eq!(
        without_names(query, &mine).as_deref(),
        Some("How many bikes do own, and where have put helmet?")
    );
    assert!(pronoun_words("Who is Yourcenar? Mine-sweeper scores, my_config").is_empty());
}
