//! Query analysis for the lexical and entity channels (seed section 10, steps 1–2).

use retold_domain::LexicalTerm;

/// The most frequent English words (function words and a few very common verbs), removed
/// from lexical queries. Frequency-based: taken from the top of general-English frequency
/// lists, not tuned on any evaluation set.
pub(crate) const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "even",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "know",
    "like",
    "make",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "said",
    "same",
    "say",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

pub(crate) fn is_stopword(term: &str) -> bool {
    STOPWORDS.binary_search(&term).is_ok()
}

/// Characters that cannot start or end a token of interest.
fn trim_punctuation(token: &str) -> &str {
    token
        .trim_matches(|c: char| {
            !c.is_alphanumeric() && c != '_' && c != '/' && c != '.' && c != '-' && c != ':'
        })
        .trim_end_matches(['.', ':', '-'])
}

/// Step 1: an identifier is a raw whitespace token that looks like code or an id: a path,
/// snake_case, a dotted or `::` name, an error code or id mixing letters and digits, or
/// camelCase.
pub(crate) fn is_identifier(token: &str) -> bool {
    let t = trim_punctuation(token);
    if t.chars().count() < 2 || !t.chars().any(char::is_alphanumeric) {
        return false;
    }
    let inner_marker = |m: char| {
        t.char_indices().any(|(i, c)| {
            c == m
                && t[..i].chars().last().is_some_and(char::is_alphanumeric)
                && t[i + c.len_utf8()..].chars().next().is_some_and(|n| n.is_alphanumeric() || n == m)
        })
    };
    let has_letter = t.chars().any(char::is_alphabetic);
    let has_digit = t.chars().any(|c| c.is_ascii_digit());
    let camel = t.chars().next().is_some_and(char::is_lowercase) && t.chars().skip(1).any(char::is_uppercase);
    inner_marker('_')
        || inner_marker('/')
        || inner_marker('.')
        || inner_marker(':')
        || (has_letter && has_digit)
        || camel
}

/// Step 1 (second half): split like SQLite's unicode61 tokenizer (letters and digits are
/// token characters; everything else separates), lowercased.
pub(crate) fn unicode61_tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

/// Steps 1–2: identifiers kept whole, other tokens split unicode61-style, stopwords and
/// one-character terms dropped except identifiers and proper nouns; duplicates removed.
pub(crate) fn lexical_terms(query: &str) -> Vec<LexicalTerm> {
    let mut terms: Vec<LexicalTerm> = Vec::new();
    let mut push = |text: String, identifier: bool| {
        if !terms.iter().any(|t| t.text == text) {
            terms.push(LexicalTerm { text, identifier });
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
            // Possessives: "Aditya's" → "Aditya".
            let phrase =
                phrase.strip_suffix("'s").or_else(|| phrase.strip_suffix("’s")).unwrap_or(&phrase).to_owned();
            if !phrases.contains(&phrase) {
                phrases.push(phrase);
            }
        }
    }
    phrases
}
