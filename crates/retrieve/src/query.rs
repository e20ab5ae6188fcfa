//! Query analysis for the lexical and entity channels (seed section 10, steps 1–2).

use retold_domain::text::{is_identifier, is_stopword, trim_punctuation, unicode61_tokens};
use retold_domain::{LexicalIndex, LexicalTerm, Name, Principal, Result, WordStemmer, fold_name};

/// Steps 1–2: identifiers kept whole, other tokens split unicode61-style, stopwords and
/// one-character terms dropped except identifiers and proper nouns; duplicates removed.
pub(crate) fn lexical_terms(query: &str) -> Vec<LexicalTerm> {
    let mut terms: Vec<LexicalTerm> = Vec::new();
    let mut push = |text: String, identifier: bool| {
        if !terms.iter().any(|t| t.text == text) {
            terms.push(LexicalTerm::new(text, identifier));
        }
    };
    for raw in query.split_whitespace() {
        if is_identifier(raw) {
            push(trim_punctuation(raw).to_owned(), true);
            continue;
        }
        // A capitalised token counts as a proper noun, so "C" or "R" survive the length rule.
        let proper = raw.chars().next().is_some_and(char::is_uppercase);
        for token in unicode61_tokens(raw) {
            if is_stopword(&token) || (token.chars().count() < 2 && !proper) {
                continue;
            }
            push(token, false);
        }
    }
    terms
}

/// Words that ask for what is known rather than name what it is about ("Tell me about Zoli",
/// "Anything on Joanna?", "Summarise what you recall about the billing service").
const ASKING_WORDS: &[&str] = &[
    "anything",
    "details",
    "everything",
    "info",
    "information",
    "list",
    "recall",
    "remember",
    "show",
    "something",
    "summarise",
    "summarize",
    "summary",
    "tell",
];

/// The query's words besides the names in `names` (folded, as the entity store matched them),
/// its pronouns, its asking words ([`ASKING_WORDS`]) and single letters: what it names
/// besides its entities.
/// Empty for "Tell me about Zoli" or "Joanna?", `research` for "What did Joanna research?".
pub(crate) fn words_besides(query: &str, names: &[&str]) -> Vec<String> {
    let names: Vec<String> = names.iter().flat_map(|n| unicode61_tokens(n)).collect();
    let mut words: Vec<String> = Vec::new();
    for word in lexical_terms(query).into_iter().flat_map(|t| unicode61_tokens(&t.text)) {
        // One letter is a possessive's `s` or an initial, not a topic.
        let letter = word.chars().count() == 1 && word.chars().all(char::is_alphabetic);
        let other = !letter
            && !names.contains(&word)
            && pronoun_words(&word).is_empty()
            && !ASKING_WORDS.contains(&word.as_str())
            && !words.contains(&word);
        if other {
            words.push(word);
        }
    }
    words
}

/// How many indexed words one term's stemming looks through.
const WORDS_PER_TERM: usize = 512;

/// Stemming (`retrieval.lexical_stemming`): each word term (letters only, three or more) that
/// `wanted` picks gains as its forms the indexed words with its stem (Snowball English in the
/// service), so "hiking" also matches "hike", "hiked" and "hikes" and they count as one term.
/// The index keeps FTS5's unicode61 words; the forms come from its vocabulary (the words that
/// start with the stem, less a final `i` or `e`, which English stemming may have written:
/// "happy" → "happi"). Identifiers stay exact. Returns whether any term gained a form.
pub(crate) async fn add_forms(
    lexical: &dyn LexicalIndex,
    stemmer: &dyn WordStemmer,
    terms: &mut [LexicalTerm],
    wanted: impl Fn(&LexicalTerm) -> bool,
) -> Result<bool> {
    let mut gained = false;
    for term in terms.iter_mut() {
        if term.identifier
            || term.text.chars().count() < 3
            || !term.text.chars().all(char::is_alphabetic)
            || !wanted(term)
        {
            continue;
        }
        let stem = stemmer.stem(&term.text);
        let prefix = stem.strip_suffix(['i', 'e']).filter(|p| !p.is_empty()).unwrap_or(&stem);
        let words = lexical.words_with_prefix(prefix, WORDS_PER_TERM).await?;
        term.forms = words.into_iter().filter(|w| *w != term.text && stemmer.stem(w) == stem).collect();
        gained |= !term.forms.is_empty();
    }
    Ok(gained)
}

/// Whom a question's pronouns point at: the first person ("I", "my", "me") is the user the
/// agent acts for, the second ("you", "your") is the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Person {
    First,
    Second,
}

/// The person a question is in, when it is in one only: "How many bikes do I own?" is in
/// the first, "What did you suggest for dinner?" in the second; "Can you remind me what I
/// said?" and "What did Mel say?" are in neither. Whole words only: "do-it-yourself",
/// "my_config" and "i.e." hold no pronoun. Known limits: a roman numeral ("World War I") reads
/// as "I", and a generic "you" ("How do you say it in French?") as the agent.
pub(crate) fn person(query: &str) -> Option<Person> {
    let (mut first, mut second) = (false, false);
    for (_, person) in pronoun_words(query) {
        match person {
            Person::First => first = true,
            Person::Second => second = true,
        }
    }
    match (first, second) {
        (true, false) => Some(Person::First),
        (false, true) => Some(Person::Second),
        _ => None,
    }
}

/// The query's pronoun words, each folded as `without_names` reads a word ("I've" is
/// "i've"), with the person it is in.
pub(crate) fn pronoun_words(query: &str) -> Vec<(String, Person)> {
    let mut words = Vec::new();
    for raw in query.split_whitespace().filter(|raw| !is_identifier(raw)) {
        let word = trim_punctuation(raw).to_lowercase();
        // "I've", "you’re": the pronoun is what comes before the apostrophe.
        let person = match word.split(['\'', '\u{2019}']).next().unwrap_or("") {
            "i" | "me" | "my" | "mine" | "myself" => Person::First,
            "you" | "your" | "yours" | "yourself" | "yourselves" => Person::Second,
            _ => continue,
        };
        words.push((word, person));
    }
    words
}

/// The name a question's pronouns point at: the principal's user id for the first person,
/// its agent id for the second (an id is always a valid name).
pub(crate) fn pointed(query: &str, principal: &Principal) -> Option<Name> {
    let id = match person(query)? {
        Person::First => principal.user_id.as_str(),
        Person::Second => principal.agent_id.as_str(),
    };
    Name::new(id).ok()
}

/// The query without the names in `names` (folded, as the entity store matched them), each
/// matched as `name_phrases` reads a phrase (punctuation trimmed, a possessive dropped), longest
/// first: "What has Melanie painted?" without "melanie" is "What has painted?". `None` when no
/// name occurs, or nothing else would be left.
pub(crate) fn without_names(query: &str, names: &[String]) -> Option<String> {
    let words: Vec<&str> = query.split_whitespace().collect();
    let phrase = |window: &[&str]| {
        fold_name(without_possessive(
            &window.iter().map(|w| trim_punctuation(w)).collect::<Vec<_>>().join(" "),
        ))
    };
    let (mut kept, mut i) = (Vec::new(), 0);
    while i < words.len() {
        let len = (1..=4.min(words.len() - i)).rev().find(|len| names.contains(&phrase(&words[i..i + len])));
        match len {
            Some(len) => i += len,
            None => {
                kept.push(words[i]);
                i += 1;
            }
        }
    }
    let removed = kept.len() < words.len();
    (removed && kept.iter().any(|w| !trim_punctuation(w).is_empty())).then(|| kept.join(" "))
}

/// Phrases of one to four words for alias lookup (the entity channel), longest first.
pub(crate) fn name_phrases(query: &str) -> Vec<String> {
    let words: Vec<&str> = query.split_whitespace().map(trim_punctuation).filter(|w| !w.is_empty()).collect();
    let mut phrases = Vec::new();
    for len in (1..=4.min(words.len())).rev() {
        for window in words.windows(len) {
            let phrase = window.join(" ");
            if len == 1 && is_stopword(&phrase.to_lowercase()) {
                continue;
            }
            let phrase = without_possessive(&phrase).to_owned();
            if !phrases.contains(&phrase) {
                phrases.push(phrase);
            }
        }
    }
    phrases
}

/// A phrase less its possessive: "Aditya's" → "Aditya".
fn without_possessive(phrase: &str) -> &str {
    phrase.strip_suffix("'s").or_else(|| phrase.strip_suffix("’s")).unwrap_or(phrase)
}

#[cfg(test)]
mod tests {
    use super::words_besides;

    #[test]
    fn what_a_query_names_besides_its_entities() {
        assert_eq!(words_besides("What did Joanna research?", &["joanna"]), ["research"]);
        assert!(words_besides("Joanna?", &["joanna"]).is_empty());
        assert!(words_besides("Tell me about Zoli", &["zoli"]).is_empty());
        assert!(words_besides("What do you remember about Zoltan Kovacs?", &["zoltan kovacs"]).is_empty());
        assert_eq!(
            words_besides("Which port did the billing-api use before the migration?", &["billing-api"]),
            ["port", "use", "migration"]
        );
        // A possessive is the name; a name the store does not know is a word like any other.
        assert_eq!(words_besides("Joanna's thesis topic?", &["joanna"]), ["thesis", "topic"]);
        assert_eq!(words_besides("What did Joanna tell Mel?", &["joanna"]), ["mel"]);
    }
}
