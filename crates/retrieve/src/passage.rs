//! Passages: the part of a long record a search result shows. A record longer than
//! `retrieval.passage_tokens` is returned with the run of whole sentences (at most that many
//! tokens) that holds the most of the query's terms, so the token budget pays for the part
//! that matched and not for the rest of a long conversation turn; `memory_get` returns the
//! whole record. Without a query term in the record, the passage is its opening.

use retold_domain::text::{sentence_spans, token_quarters, unicode61_spans, unicode61_tokens};

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

/// What a result shows: its passage, or the whole content.
pub(crate) fn shown<'a>(passage: Option<&'a Passage>, content: &'a str) -> &'a str {
    passage.map_or(content, |p| p.text.as_str())
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
    let spans: Vec<(usize, usize, String)> =
        unicode61_spans(content).into_iter().filter(|(_, _, w)| words.contains(w)).collect();
    let sentences = sentence_spans(&chars);
    // Per sentence, the distinct query words it holds.
    let found: Vec<usize> = sentences
        .iter()
        .map(|&(from, to)| {
            let mut inside: Vec<&str> =
                spans.iter().filter(|s| s.0 >= from && s.1 <= to).map(|s| s.2.as_str()).collect();
            inside.sort_unstable();
            inside.dedup();
            inside.len()
        })
        .collect();
    // The anchor: the sentence with the most query words (the first of equals).
    let anchor = (0..sentences.len()).rev().max_by_key(|&i| found[i]).unwrap_or(0);
    let costs = Costs::of(&chars, max_tokens);
    let (from, to) = match costs.cost(sentences[anchor].0, sentences[anchor].1) > costs.budget {
        true => costs.within_sentence(&chars, sentences[anchor], &spans),
        false => costs.whole_sentences(&sentences, &found, anchor),
    };
    Some(cut(&chars, from, to))
}

/// What a passage may cost and what each range costs, in quarter tokens (`token_quarters`).
struct Costs {
    budget: usize,
    /// `quarters[i]`: what `chars[..i]` costs.
    quarters: Vec<usize>,
}

impl Costs {
    fn of(chars: &[char], max_tokens: usize) -> Self {
        let mut quarters = Vec::with_capacity(chars.len() + 1);
        quarters.push(0);
        for &c in chars {
            quarters.push(quarters.last().copied().unwrap_or(0) + token_quarters(c));
        }
        Self { budget: max_tokens * 4, quarters }
    }

    /// What `chars[a..b]` costs.
    fn cost(&self, a: usize, b: usize) -> usize {
        self.quarters[b] - self.quarters[a]
    }

    /// One sentence longer than the passage: start a little before its first match, at a
    /// word's start when one is near, and end at a word's end when one is near. The lead
    /// costs a quarter of the budget, at most 80 quarters (20 tokens); the reaches for a
    /// word's edge are as many characters as the budget has tokens.
    fn within_sentence(
        &self,
        chars: &[char],
        (from, to): (usize, usize),
        spans: &[(usize, usize, String)],
    ) -> (usize, usize) {
        let quarters = &self.quarters;
        let reach = self.budget / 4;
        let first = spans.iter().find(|s| s.0 >= from && s.1 <= to).map_or(from, |s| s.0);
        let lead = reach.min(80);
        let start = from + quarters[from..=first].partition_point(|&q| quarters[first] - q > lead);
        let from = word_start(chars, start, lead);
        // The furthest end whose range fits the budget.
        let fits = quarters[from..=to].partition_point(|&q| q - quarters[from] <= self.budget);
        (from, word_end(chars, from + fits.saturating_sub(1), reach))
    }

    /// Grow from the anchor by whole sentences: next the neighbour with more query words (the
    /// following one on equals), while the passage fits.
    fn whole_sentences(
        &self,
        sentences: &[(usize, usize)],
        found: &[usize],
        anchor: usize,
    ) -> (usize, usize) {
        let (mut from, mut to) = sentences[anchor];
        let (mut before, mut after) = (anchor, anchor + 1);
        loop {
            let next = sentences.get(after).filter(|s| self.cost(from, s.1) <= self.budget);
            let prev = before.checked_sub(1).filter(|&b| self.cost(sentences[b].0, to) <= self.budget);
            match (prev, next) {
                (Some(b), Some(_)) if found[b] > found[after] => {
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
        (from, to)
    }
}

/// `chars[from..to]` without whitespace at its ends (so `text` is exactly
/// `content[start..end]`), with an ellipsis where it cuts the content.
fn cut(chars: &[char], mut from: usize, mut to: usize) -> Passage {
    while from < to && chars[from].is_whitespace() {
        from += 1;
    }
    while to > from && chars[to - 1].is_whitespace() {
        to -= 1;
    }
    let mut text = String::new();
    if from > 0 {
        text.push('…');
    }
    text.extend(&chars[from..to]);
    if to < chars.len() {
        text.push('…');
    }
    Passage { text, start: from, end: to }
}

/// `at`, moved back to the start of the word it falls in when that is at most `reach`
/// characters back (a run without spaces, like a URL, is cut where it is).
fn word_start(chars: &[char], at: usize, reach: usize) -> usize {
    let mut start = at;
    while start > 0 && at - start < reach && !chars[start - 1].is_whitespace() {
        start -= 1;
    }
    if start == 0 || chars[start - 1].is_whitespace() { start } else { at }
}

/// `at` (an exclusive end), moved back to the end of the word it cuts when that is at most
/// `reach` characters back; left where it is otherwise.
fn word_end(chars: &[char], at: usize, reach: usize) -> usize {
    if at >= chars.len() || chars[at].is_whitespace() {
        return at.min(chars.len());
    }
    let mut end = at;
    while end > 0 && at - end < reach && !chars[end - 1].is_whitespace() {
        end -= 1;
    }
    if end > 0 && chars[end - 1].is_whitespace() { end } else { at }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(query: &str) -> Vec<String> {
        query_words(query)
    }

    /// `text` is exactly `content[start..end]` (in characters), with `…` where it cuts.
    fn check_located(content: &str, p: &Passage) {
        let chars: Vec<char> = content.chars().collect();
        let shown: String = chars[p.start..p.end].iter().collect();
        let mut expected = String::new();
        if p.start > 0 {
            expected.push('…');
        }
        expected.push_str(&shown);
        if p.end < content.chars().count() {
            expected.push('…');
        }
        assert_eq!(p.text, expected);
        assert!(
            !shown.starts_with(char::is_whitespace) && !shown.ends_with(char::is_whitespace),
            "{shown:?}"
        );
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
        assert_eq!(
            p.text,
            "…By the way, I finally reached 1300 followers on Instagram last week, which feels great.…"
        );
        check_located(TURN, &p);
        assert!(text_tokens(&p.text) <= 31, "{} tokens: {}", text_tokens(&p.text), p.text);
    }

    #[test]
    fn the_passage_grows_towards_the_neighbour_with_more_query_words() {
        let content = "Filler one two three four. The castle gate opens at nine. \
            The castle views are best at sunset. Nothing else to add today.";
        // Room for one neighbour of the anchor (castle, views, sunset): the one before holds
        // "castle", the one after nothing; on equals the one after would win.
        let p = passage(content, &words("castle views at sunset"), 20).unwrap();
        assert_eq!(p.text, "…The castle gate opens at nine. The castle views are best at sunset.…", "{p:?}");
        check_located(content, &p);
        let p = passage(content, &words("views at sunset"), 20).unwrap();
        assert_eq!(p.text, "…The castle views are best at sunset. Nothing else to add today.", "{p:?}");
        check_located(content, &p);
    }

    #[test]
    fn without_a_query_word_the_passage_is_the_opening() {
        let p = passage(TURN, &words("quantum chromodynamics"), 30).unwrap();
        assert_eq!(p.start, 0);
        assert!(p.text.starts_with("I'm planning a trip") && p.text.ends_with('…'), "{}", p.text);
        check_located(TURN, &p);
    }

    #[test]
    fn a_sentence_longer_than_the_limit_is_cut_at_words_around_its_first_match() {
        let long = format!(
            "{}the error code is E4021 and the fix was a restart {}",
            "word ".repeat(200),
            "tail ".repeat(200)
        );
        let p = passage(&long, &words("error code E4021"), 40).unwrap();
        assert!(p.text.contains("error code is E4021 and the fix was a restart"), "{}", p.text);
        assert!(p.text.starts_with("…word ") && p.text.ends_with(" tail…"), "cut between words: {}", p.text);
        assert!(text_tokens(&p.text) <= 41, "{}", p.text);
        check_located(&long, &p);
        // At the smallest limit the match still leads the passage.
        let p = passage(&long, &words("E4021"), 20).unwrap();
        assert!(p.text.contains("E4021"), "{}", p.text);
        check_located(&long, &p);
    }

    #[test]
    fn a_run_without_spaces_is_cut_where_it_is_and_keeps_its_match() {
        let blob = format!(
            "Build failed. {{\"log\":\"{}\",\"code\":\"E4021\",\"rest\":\"{}\"}}",
            "x".repeat(1500),
            "y".repeat(1500)
        );
        let p = passage(&blob, &words("E4021"), 50).unwrap();
        assert!(p.text.contains("E4021"), "{}", p.text);
        assert!(p.end - p.start >= 150 && text_tokens(&p.text) <= 51, "{} chars", p.end - p.start);
        check_located(&blob, &p);
    }

    #[test]
    fn a_han_passage_fits_the_limit_in_tokens_not_in_latin_characters() {
        // Each Han character is a token: 30 tokens hold about two of these sentences, not
        // eight (as four characters a token would have it).
        let text = "我们周一在东京开会讨论预算。".repeat(10)
            + "服务器报错 E4021 后重启了。"
            + &"我们周五去看电影然后吃晚饭。".repeat(10);
        let p = passage(&text, &words("E4021"), 30).unwrap();
        assert!(p.text.contains("服务器报错 E4021 后重启了。"), "{}", p.text);
        assert!(text_tokens(&p.text) <= 32, "{} tokens: {}", text_tokens(&p.text), p.text);
        check_located(&text, &p);
        // One Han sentence longer than the limit is cut to it too.
        let long = "数据库".repeat(100) + " E4021 " + &"日志".repeat(100);
        let p = passage(&long, &words("E4021"), 20).unwrap();
        assert!(p.text.contains("E4021"), "{}", p.text);
        assert!(text_tokens(&p.text) <= 22, "{} tokens: {}", text_tokens(&p.text), p.text);
        check_located(&long, &p);
    }

    #[test]
    fn multibyte_text_is_located_in_characters() {
        let text = "Café crème à Zürich coûte 4,50 CHF. ".repeat(30) + "Le métro ferme à minuit.";
        let p = passage(&text, &words("métro minuit"), 20).unwrap();
        assert!(p.text.ends_with("Le métro ferme à minuit.") && p.text.starts_with("…Café"), "{}", p.text);
        assert_eq!(p.end, text.chars().count());
        check_located(&text, &p);
    }
}
