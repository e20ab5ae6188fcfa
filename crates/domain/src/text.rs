//! Text analysis shared by the write path and the search pipeline: the one word splitter
//! (FTS5's unicode61 rules), the stopword and limiting-word lists, identifier detection,
//! names/numbers/dates ("values"), sentences and token estimates. One definition each, so the
//! lexical channel, the query rewriter's refusal rule, review narrowing and the same-meaning
//! rule agree on what a word is. Stems are the `WordStemmer` port's (one Snowball stemmer).

use std::collections::BTreeSet;

/// The most frequent English words (function words and a few very common verbs), removed
/// from lexical queries. Frequency-based: taken from the top of general-English frequency
/// lists, not tuned on any evaluation set.
pub const STOPWORDS: &[&str] = &[
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
    "many",
    "me",
    "more",
    "most",
    "much",
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

/// How many words `text` has: each run of letters and digits is one ("That's" is two, "4 GB"
/// two), except that in scripts written without spaces (letters with no case: Han, kana,
/// Thai) each letter counts as one, so a sentence there is not one long word.
pub fn word_count(text: &str) -> usize {
    let uncased = |c: char| c.is_alphabetic() && !c.is_lowercase() && !c.is_uppercase();
    words(text)
        .map(|run| match run.chars().filter(|c| uncased(*c)).count() {
            0 => 1,
            letters => letters,
        })
        .sum()
}

/// A sentence with each run of digits written as one `0`: the template a log line or a
/// counter's report is written from. "shard 0017 verified: 128 blocks" and "shard 0932
/// verified: 64 blocks" share one; "shard 0017 failed" does not.
pub fn number_template(sentence: &str) -> String {
    let mut template = String::with_capacity(sentence.len());
    let mut in_number = false;
    for c in sentence.trim().chars() {
        if c.is_ascii_digit() {
            if !in_number {
                template.push('0');
            }
            in_number = true;
        } else {
            template.push(c);
            in_number = false;
        }
    }
    template
}

/// Whether a lowercased term is on the frequency stopword list.
pub fn is_stopword(term: &str) -> bool {
    STOPWORDS.binary_search(&term).is_ok()
}

/// Words that limit or invert a claim: a revision that drops one says more, not less.
pub const LIMITING_WORDS: &[&str] = &[
    "not",
    "no",
    "never",
    "none",
    "nobody",
    "nothing",
    "neither",
    "nor",
    "cannot",
    "without",
    "except",
    "only",
    "unless",
    "until",
    "till",
    "before",
    "after",
    "since",
    "during",
    "sometimes",
    "occasionally",
    "rarely",
    "seldom",
    "usually",
    "often",
    "mostly",
    "partly",
    "maybe",
    "perhaps",
    "probably",
    "possibly",
    "might",
    "may",
    "could",
    "likely",
    "unlikely",
    "if",
    "when",
    "while",
    "temporarily",
    "currently",
    "formerly",
    "previously",
    "once",
    "almost",
    "nearly",
    "some",
    "few",
    "several",
];

/// Whether a lowercased word limits or inverts a claim.
pub fn is_limiting(word: &str) -> bool {
    LIMITING_WORDS.contains(&word)
}

/// Characters that cannot start or end a token of interest.
pub fn trim_punctuation(token: &str) -> &str {
    token
        .trim_matches(|c: char| {
            !c.is_alphanumeric() && c != '_' && c != '/' && c != '.' && c != '-' && c != ':'
        })
        .trim_end_matches(['.', ':', '-'])
}

/// Step 1: an identifier is a raw whitespace token that looks like code or an id: a path,
/// snake_case, a dotted or `::` name, an error code or id mixing letters and digits, or
/// camelCase.
pub fn is_identifier(token: &str) -> bool {
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

/// The one word splitter every stage uses: SQLite FTS5's unicode61 rules (letters and digits
/// are token characters; everything else separates), the words as written (not folded).
/// FTS5 also folds case and Latin diacritics when it indexes; [`unicode61_tokens`] folds
/// case, and a store folds diacritics as its index does.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    words_joined_by(text, &[])
}

/// [`words`], with `joiners` also kept inside a word (the time reader keeps `2023-05-03` and
/// `mid-March` whole); a joiner at a word's edge is not part of it.
pub fn words_joined_by<'a>(text: &'a str, joiners: &'a [char]) -> impl Iterator<Item = &'a str> {
    text.split(move |c: char| !(c.is_alphanumeric() || joiners.contains(&c)))
        .map(move |w| w.trim_matches(|c: char| joiners.contains(&c)))
        .filter(|w| !w.is_empty())
}

/// Step 1 (second half): [`words`], lowercased, as FTS5's unicode61 tokenizer gives them
/// before it folds diacritics.
pub fn unicode61_tokens(text: &str) -> Vec<String> {
    words(text).map(str::to_lowercase).collect()
}

/// The words of [`unicode61_tokens`], each with its character range `[start, end)` in `text`.
pub fn unicode61_spans(text: &str) -> Vec<(usize, usize, String)> {
    let mut spans = Vec::new();
    let mut word: Option<(usize, String)> = None;
    let mut at = 0;
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.get_or_insert_with(|| (at, String::new())).1.push(c);
        } else if let Some((start, w)) = word.take() {
            spans.push((start, at, w.to_lowercase()));
        }
        at += 1;
    }
    if let Some((start, w)) = word {
        spans.push((start, at, w.to_lowercase()));
    }
    spans
}

/// Lowercased unicode61 words with contractions opened ("doesn't" → "does not").
pub fn opened_words(text: &str) -> Vec<String> {
    unicode61_tokens(&text.replace("n't", " not").replace("n’t", " not"))
}

/// Whether a raw token names a value worth checking: a capitalised word that is not a
/// stopword (a name, a month, a weekday), or anything with a digit (a date, a number, an id).
pub fn is_value(token: &str) -> bool {
    let capitalised =
        token.chars().next().is_some_and(char::is_uppercase) && !is_stopword(&token.to_lowercase());
    capitalised || token.chars().any(|c| c.is_ascii_digit())
}

/// The names, dates and numbers of a text, lowercased. Embeddings barely move when one of
/// these changes ("leaves on Tuesdays" vs "Thursdays" scored 0.915), so two texts only mean
/// the same when these agree.
pub fn value_tokens(text: &str) -> BTreeSet<String> {
    words(text).filter(|t| is_value(t)).map(str::to_lowercase).collect()
}

/// Words already said, known by their stems under a [`crate::WordStemmer`]: a word is known
/// when it or an inflection of it is among them ("explanation" after "explanations",
/// "preferred" after "prefer"). The rewrite guard and the extraction review ask it which of a
/// new text's words are new.
pub struct KnownWords<'a> {
    stemmer: &'a dyn crate::WordStemmer,
    stems: BTreeSet<String>,
}

impl<'a> KnownWords<'a> {
    /// `words` (folded as the caller compares them), known by their stems.
    pub fn new(
        words: impl IntoIterator<Item = impl AsRef<str>>,
        stemmer: &'a dyn crate::WordStemmer,
    ) -> Self {
        let stems = words.into_iter().map(|w| stemmer.stem(w.as_ref())).collect();
        Self { stemmer, stems }
    }

    /// Whether `word` or an inflection of it was said.
    pub fn knows(&self, word: &str) -> bool {
        self.stems.contains(&self.stemmer.stem(word))
    }
}

impl std::fmt::Debug for KnownWords<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownWords").field("stems", &self.stems).finish_non_exhaustive()
    }
}

/// Whether two texts carry the same names, dates and numbers.
pub fn same_values(a: &str, b: &str) -> bool {
    value_tokens(a) == value_tokens(b)
}

/// Sentence spans of `chars` as `[start, end)` character ranges covering all of it: a
/// sentence ends at `.`, `!` or `?` followed by whitespace (or the end), at a line break (a
/// log line, a list item, a line of code is a unit of its own), and at CJK `。`, `！`, `？`
/// (which need no space after them); the whitespace after it belongs to it. A passage is
/// grown by these, and a record's sentence vectors are embedded from them.
pub fn sentence_spans(chars: &[char]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut from = 0;
    let mut i = 0;
    while i < chars.len() {
        let ends = match chars[i] {
            '\n' | '。' | '！' | '？' => true,
            '.' | '!' | '?' => chars.get(i + 1).is_none_or(|c| c.is_whitespace()),
            _ => false,
        };
        i += 1;
        if ends {
            while i < chars.len() && chars[i].is_whitespace() {
                i += 1;
            }
            spans.push((from, i));
            from = i;
        }
    }
    if from < chars.len() {
        spans.push((from, chars.len()));
    }
    spans
}

/// Words that head a line of a note, a log or a message rather than name who said it
/// ("Note: …", "Update: …", "Re: …"), lowercased.
pub const HEADING_WORDS: &[&str] = &[
    "action",
    "answer",
    "bug",
    "caution",
    "cause",
    "command",
    "context",
    "date",
    "debug",
    "decision",
    "edit",
    "error",
    "example",
    "fact",
    "feature",
    "fix",
    "fwd",
    "goal",
    "hint",
    "important",
    "info",
    "input",
    "issue",
    "link",
    "location",
    "log",
    "note",
    "notes",
    "output",
    "problem",
    "question",
    "re",
    "reason",
    "ref",
    "reminder",
    "request",
    "response",
    "result",
    "results",
    "solution",
    "source",
    "status",
    "step",
    "subject",
    "summary",
    "task",
    "time",
    "tip",
    "title",
    "todo",
    "topic",
    "update",
    "warning",
];

/// A transcript line's speaker label: the opening `Name: ` of `content` when what comes
/// before the colon reads as a name: one to three words of at most 40 characters with no
/// sentence end in them, starting with a capital, not all capitals (`ERROR: `, `WARN: `,
/// `TODO: ` and `Q: ` are a log's or a form's), and not a heading word ([`HEADING_WORDS`]:
/// `Note: `, `Update: `). "Caroline: I went hiking." has `Caroline: `. Empty when there is none.
pub fn speaker_label(content: &str) -> &str {
    let Some((before, _)) = content.split_once(": ") else { return "" };
    let words = before.split_whitespace().count();
    let plain = !before.contains(['.', '!', '?', '\n', '[', '(']);
    let capitalised = before.chars().next().is_some_and(char::is_uppercase);
    let not_all_capitals = before.chars().any(char::is_lowercase);
    let heading = before
        .split_whitespace()
        .next()
        .is_some_and(|first| HEADING_WORDS.contains(&first.to_lowercase().as_str()));
    if (1..=3).contains(&words)
        && before.chars().count() <= 40
        && plain
        && capitalised
        && not_all_capitals
        && !heading
    {
        &content[..before.len() + 2]
    } else {
        ""
    }
}

/// Estimated tokens of `text` as a language model's tokenizer counts them: four characters
/// a token in Latin script (and for digits, punctuation and spaces), two in other alphabets
/// (Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai: their letters take more tokens), and
/// one a character in scripts written without spaces (Han, kana, Hangul) and for emoji.
pub fn estimated_tokens(text: &str) -> usize {
    text.chars().map(token_quarters).sum::<usize>().div_ceil(4)
}

/// A character's share of a token, in quarters (see [`estimated_tokens`]).
pub fn token_quarters(c: char) -> usize {
    let code = u32::from(c);
    let wide = matches!(code,
        0x1100..=0x11FF      // Hangul jamo
        | 0x2E80..=0x303F    // CJK radicals, symbols and punctuation
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x3100..=0x31FF    // Bopomofo, Hangul compatibility jamo, Katakana extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF00..=0xFFEF    // full-width forms
        | 0x1F300..=0x1FAFF  // emoji
        | 0x20000..=0x3FFFF  // CJK extensions B onwards
    );
    if wide {
        4
    } else if c.is_alphabetic() && code > 0x024F {
        2
    } else {
        1
    }
}

/// The last `n` characters of `text` (all of it when shorter): what a turn said after
/// another keeps of it as its context.
pub fn last_chars(text: &str, n: usize) -> &str {
    let Some(last) = n.checked_sub(1) else { return "" };
    let start = text.char_indices().rev().nth(last).map_or(0, |(at, _)| at);
    &text[start..]
}

#[cfg(test)]
mod spans_tests {
    use super::{unicode61_spans, unicode61_tokens};

    #[test]
    fn spans_are_the_tokens_with_their_character_ranges() {
        let text = "Zürich's café: E4021, ok";
        let spans = unicode61_spans(text);
        let words: Vec<String> = spans.iter().map(|s| s.2.clone()).collect();
        assert_eq!(words, unicode61_tokens(text));
        let chars: Vec<char> = text.chars().collect();
        for (start, end, word) in &spans {
            assert_eq!(&chars[*start..*end].iter().collect::<String>().to_lowercase(), word);
        }
        assert_eq!(spans[0], (0, 6, "zürich".to_owned()));
    }
}
