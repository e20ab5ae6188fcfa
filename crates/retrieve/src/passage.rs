//! Passages: the part of a long record a search result shows. A record longer than
//! `retrieval.passage_tokens` is returned with the run of whole sentences (at most that many
//! tokens) that holds the most of the query's terms, so the token budget pays for the part
//! that matched and not for the rest of a long conversation turn; `memory_get` returns the
//! whole record. Without a query term in the record, the passage is its opening.

use retold_domain::text::unicode61_tokens;

use crate::pipeline::text_tokens;
use crate::query::lexical_terms;

/// The shown part of a record's content: `text` is `content[start..end]` (in characters),
/// with `…` before it when it does not start the content and after it when it does not end it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    pub text: String,
    /// First character of the content shown (0-based, in Unicode scalar values).
    pub start: usize,
    /// One past the last character shown.
    pub end: usize,
}

/// The query's terms as a passage matches them: lowercased unicode61 words (an identifier
/// counts as its words, as in the lexical index).
pub fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for term in lexical_terms(query) {
        for word in unicode61_tokens(&term.text) {
            if !words.contains(&word) {
                words.push(word);
            }
        }
    }
    words
}

/// The passage of `content` to show for a query whose words are `words`, or `None` when the
/// whole content fits in `max_tokens`.
pub fn passage(content: &str, words: &[String], max_tokens: usize) -> Option<Passage> {
    if max_tokens == 0 || text_tokens(content) <= max_tokens {
        return None;
    }
    let chars: Vec<char> = content.chars().collect();
    let sentences = sentences(&chars);
    let matched = |&(from, to): &(usize, usize)| -> Vec<String> {
        let text: String = chars[from..to].iter().collect();
        let tokens = unicode61_tokens(&text);
        words.iter().filter(|w| tokens.contains(w)).cloned().collect()
    };
    let found: Vec<Vec<String>> = sentences.iter().map(matched).collect();
    // The anchor: the sentence with the most query words (the first of equals).
    let anchor = (0..sentences.len()).rev().max_by_key(|&i| found[i].len()).unwrap_or(0);
    let budget_chars = max_tokens * 4;
    let (mut from, mut to) = sentences[anchor];
    if to - from > budget_chars {
        // One sentence longer than the passage: start a little before its first match.
        let first = first_match(&chars[from..to], &found[anchor]).map_or(0, |p| p.saturating_sub(80));
        from = word_start(&chars, from + first);
        to = word_end(&chars, (from + budget_chars).min(to));
    } else {
        // Grow by whole sentences: next the neighbour with more query words (the following
        // one on equals), while the passage fits.
        let (mut before, mut after) = (anchor, anchor + 1);
        loop {
            let next = sentences.get(after).filter(|s| s.1 - from <= budget_chars);
            let prev = before.checked_sub(1).filter(|&b| to - sentences[b].0 <= budget_chars);
            match (prev, next) {
                (Some(b), Some(_)) if found[b].len() > found[after].len() => {
                    before = b;
                    from = sentences[b].0;
                }
                (_, Some(s)) => {
                    to = s.1;
                    after += 1;
                }
                (Some(b), None) => {
                    before = b;
                    from = sentences[b].0;
                }
                (None, None) => break,
            }
        }
    }
    let shown: String = chars[from..to].iter().collect::<String>();
    let shown = shown.trim();
    let mut text = String::new();
    if from > 0 {
        text.push('…');
    }
    text.push_str(shown);
    if to < chars.len() {
        text.push('…');
    }
    Some(Passage { text, start: from, end: to })
}

/// Sentence spans `[from, to)`: a sentence ends after `.`, `!`, `?` or a line break followed by
/// whitespace (its trailing whitespace belongs to it).
fn sentences(chars: &[char]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut from = 0;
    let mut i = 0;
    while i < chars.len() {
        let ends =
            matches!(chars[i], '.' | '!' | '?' | '\n') && chars.get(i + 1).is_none_or(|c| c.is_whitespace());
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

/// Character offset of the first of `words` in `chars` (as a whole unicode61 word).
fn first_match(chars: &[char], words: &[String]) -> Option<usize> {
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_alphanumeric() {
            let start = i;
            while i < chars.len() && chars[i].is_alphanumeric() {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect::<String>().to_lowercase();
            if words.contains(&word) {
                return Some(start);
            }
        } else {
            i += 1;
        }
    }
    None
}

/// `at`, moved back to the start of the word it falls in.
fn word_start(chars: &[char], mut at: usize) -> usize {
    while at > 0 && !chars[at - 1].is_whitespace() {
        at -= 1;
    }
    at
}

/// `at`, moved back to the end of the last whole word before it (unless that leaves nothing).
fn word_end(chars: &[char], at: usize) -> usize {
    if at >= chars.len() {
        return chars.len();
    }
    let mut end = at;
    while end > 0 && !chars[end - 1].is_whitespace() {
        end -= 1;
    }
    if end == 0 { at } else { end }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(query: &str) -> Vec<String> {
        query_words(query)
    }

    const TURN: &str = "I'm planning a trip to Lisbon next spring and I'd love some advice on \
        neighbourhoods. By the way, I finally reached 1300 followers on Instagram last week, \
        which feels great. Anyway, what are the best areas to stay in if I want to walk \
        everywhere? I also want to try the local pastries. Thanks in advance for any tips you \
        can share about getting around the city by tram.";

    #[test]
    fn a_record_within_the_limit_has_no_passage() {
        assert_eq!(passage("Short turn about Lisbon.", &words("Lisbon"), 100), None);
        assert_eq!(passage(TURN, &words("Instagram followers"), 0), None, "0 turns passages off");
    }

    #[test]
    fn the_passage_is_the_run_of_sentences_with_the_query_words_and_fits_the_limit() {
        let p = passage(TURN, &words("How many followers do I have on Instagram now?"), 30).unwrap();
        assert!(p.text.contains("1300 followers on Instagram"), "{}", p.text);
        assert!(p.text.starts_with('…') && p.text.ends_with('…'), "{}", p.text);
        assert!(text_tokens(&p.text) <= 31, "{} tokens: {}", text_tokens(&p.text), p.text);
        let shown: String = TURN.chars().skip(p.start).take(p.end - p.start).collect();
        assert_eq!(p.text.trim_matches('…'), shown.trim(), "start and end locate the passage");
    }

    #[test]
    fn without_a_query_word_the_passage_is_the_opening() {
        let p = passage(TURN, &words("quantum chromodynamics"), 30).unwrap();
        assert_eq!(p.start, 0);
        assert!(p.text.starts_with("I'm planning a trip") && p.text.ends_with('…'), "{}", p.text);
    }

    #[test]
    fn a_sentence_longer_than_the_limit_is_cut_at_words_around_its_first_match() {
        let long = format!(
            "{} the error code is E4021 and the fix was a restart {}",
            "word ".repeat(200),
            "tail ".repeat(200)
        );
        let p = passage(&long, &words("error code E4021"), 40).unwrap();
        assert!(p.text.contains("error code is E4021"), "{}", p.text);
        assert!(text_tokens(&p.text) <= 41, "{}", p.text);
        assert!(!p.text.trim_matches('…').starts_with(' ') && !p.text.contains("wor…"), "{}", p.text);
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "Café crème à Zürich coûte 4,50 CHF. ".repeat(30) + "Le métro ferme à minuit.";
        let p = passage(&text, &words("métro minuit"), 20).unwrap();
        assert!(p.text.contains("métro ferme à minuit"), "{}", p.text);
        assert_eq!(p.end, text.chars().count());
    }
}
