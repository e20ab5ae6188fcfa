//! The search pipeline's settings, as plain values.

use std::time::Duration;

/// Thresholds of the search pipeline (`retrieval.*` in the configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct RetrieveConfig {
    /// RRF constant: each list adds `1 / (rrf_k + rank)`.
    pub rrf_k: u32,
    /// Each channel's weight in the fusion (1.0 each, `FusionWeights::default()`, is the seed's
    /// plain RRF; the shipped default weighs the entity channel twice).
    pub fusion_weights: FusionWeights,
    /// Candidates per channel before fusion.
    pub per_generator_k: usize,
    /// Which query words the lexical channel also matches by their inflections.
    pub lexical_stemming: LexicalStemming,
    /// How much of the eligible records' mean vector the dense channel takes away before it
    /// ranks by cosine (the gate still reads the plain cosine).
    pub dense_centring: retold_domain::Centring,
    /// When the query names a person the store knows (a name or alias the entity channel
    /// resolves to a person), or points at one the store knows by its pronouns (`pronouns`),
    /// the dense channel's query vector is this share the query as written and the rest the
    /// query without those names and pronouns; 1.0 embeds it as written only.
    /// A name in a short question otherwise pulls the turns that say the name (the other
    /// speaker's "Wow, Mel!") toward it as much as what the question asks.
    pub dense_name_weight: f32,
    pub default_limit: usize,
    pub max_limit: usize,
    /// Tool-result budget in tokens (estimated as characters / 4 plus a per-record overhead).
    pub token_budget: usize,
    /// A dense-only match needs at least this cosine.
    pub dense_floor: f64,
    /// A lexical-only match needs at least this share of the query's terms.
    pub lexical_min_term_share: f64,
    /// A lexical-only match of at least this many query terms passes whatever its share (a
    /// long question's evidence shares two or three of its words, not half).
    pub lexical_enough_terms: usize,
    /// Survivors with at least this cosine to a higher-ranked survivor are collapsed.
    pub duplicate_collapse_floor: f64,
    /// The entity channel skips an entity linked to more than this share of the eligible
    /// records and to more than `per_generator_k` of them (1.0 keeps every entity).
    pub entity_max_share: f64,
    /// A broad entity the query names (one past `entity_max_share`) still ranks those of its
    /// records the dense or lexical channel found, in their best rank there: the name then
    /// corroborates a candidate instead of listing half the store.
    pub entity_broad_corroborates: bool,
    /// A question in the first person ("How many bikes do I own?") names the principal's
    /// user to the entity channel, one in the second ("What did you suggest?") its agent: a
    /// host that writes each turn about its speaker gets the asker's own turns first. It
    /// reads the query as the user's words; an agent that phrases queries in its own first
    /// person should turn it off.
    pub pronouns: bool,
    /// An episodic record's score halves every this many days (non-time-bounded queries).
    pub episodic_half_life_days: f64,
    /// The smallest freshness factor an old episode can get (its score never drops below
    /// this share of its fused score).
    pub episodic_freshness_floor: f64,
    /// Of two alike results at a close score, the newer ranks above the older (not when
    /// the query names or filters its time). `None` leaves the order to the scores.
    pub newer_first: Option<crate::NewerFirst>,
    /// An episode that says little (few words besides stopwords: "Bye!", "Thanks, see you
    /// then") ranks lower. `None` (the default) leaves every episode its score: a chat's
    /// greetings fall, but so does evidence that is one concise sentence (figures:
    /// docs/quality.md).
    pub substance: Option<Substance>,
    /// Rerank survivors when a reranker is configured.
    pub reranker_enabled: bool,
    pub reranker_timeout: Duration,
    /// Where the reranker runs: after the relevance gate, or in its place.
    pub reranker_placement: RerankerPlacement,
    /// How many of the first survivors the reranker reorders; the rest follow in their order.
    pub reranker_candidates: usize,
    /// A result whose record is longer than this many tokens shows (and costs the budget) its
    /// passage: the run of sentences with the most query words, at most this long. 0 shows
    /// whole records.
    pub passage_tokens: usize,
    /// When a query names its time ("last month", "on 13 October 2023"): the factor a record
    /// dated inside that window gets, with freshness off for that search. `None` reads no
    /// time from queries.
    pub query_time_boost: Option<f64>,
    /// When a question asks for a time ("When did…", "What year…"): the factor a record that
    /// names a time ("yesterday", "last Friday", "in 2022") gets. 1.0 leaves them as they are.
    pub asks_when_boost: f64,
}

/// Which query words the lexical channel also matches by the indexed words that share
/// their Snowball English stem ("vacationed" → "vacation", counted as the word asked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LexicalStemming {
    /// Exact words only.
    Off,
    /// A word none of the exact search's eligible hits hold: the search runs once more with
    /// its inflections; stemming every word lets inflections crowd out exact matches at the
    /// top (figures: docs/quality.md).
    Unmatched,
    /// Every word.
    All,
}

/// How an episode's substance weighs on its score: one with `n` content words (words that
/// are not stopwords) under `words` keeps `floor + (1 - floor) × n / words` of its score.
/// Semantic and procedural records are distilled statements, short by design: they keep
/// theirs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Substance {
    pub words: usize,
    pub floor: f64,
}

impl Substance {
    /// The factor for a text of `content_words` words that are not stopwords.
    pub fn factor(&self, content_words: usize) -> f64 {
        if content_words >= self.words {
            return 1.0;
        }
        self.floor + (1.0 - self.floor) * content_words as f64 / self.words as f64
    }
}

/// Where the reranker runs (seed section 11: "after the RRF floors or in place of them").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RerankerPlacement {
    /// The relevance gate first, then the reranker orders what passed.
    AfterGate,
    /// No relevance gate: the reranker orders every fused candidate's head instead.
    InsteadOfGate,
}

impl Default for RetrieveConfig {
    /// The shipped defaults (`config/default.yaml`).
    fn default() -> Self {
        Self {
            rrf_k: 5,
            fusion_weights: FusionWeights {
                entity: 2.0,
                sentences: 1.0,
                window: 0.75,
                ..FusionWeights::default()
            },
            per_generator_k: 50,
            lexical_stemming: LexicalStemming::Unmatched,
            dense_centring: retold_domain::Centring::new(1.0).expect("1.0 is a share"),
            dense_name_weight: 0.3,
            default_limit: 10,
            max_limit: 50,
            token_budget: 2000,
            dense_floor: 0.30,
            lexical_min_term_share: 0.5,
            lexical_enough_terms: 2,
            duplicate_collapse_floor: 0.95,
            entity_max_share: 0.2,
            entity_broad_corroborates: true,
            pronouns: true,
            episodic_half_life_days: 14.0,
            episodic_freshness_floor: 0.7,
            newer_first: Some(crate::NewerFirst { similarity: 0.4, score_share: 0.5, head: 5 }),
            substance: None,
            reranker_enabled: false,
            reranker_timeout: Duration::from_millis(800),
            reranker_placement: RerankerPlacement::AfterGate,
            reranker_candidates: 20,
            passage_tokens: 100,
            query_time_boost: Some(2.0),
            asks_when_boost: 2.0,
        }
    }
}

/// A weight per channel in the fusion: a channel's list adds `weight / (rrf_k + rank)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionWeights {
    pub dense: f64,
    pub lexical: f64,
    pub entity: f64,
    /// The dense channel's second list, records ranked by their best sentence vector; 0
    /// (the seed's plain RRF) runs no such list.
    pub sentences: f64,
    /// The dense channel over the records inside the time the query names; 0 runs no such
    /// list.
    pub window: f64,
}

impl Default for FusionWeights {
    fn default() -> Self {
        Self { dense: 1.0, lexical: 1.0, entity: 1.0, sentences: 0.0, window: 0.0 }
    }
}

impl FusionWeights {
    pub fn of(&self, channel: retold_domain::Channel) -> f64 {
        match channel {
            retold_domain::Channel::Dense => self.dense,
            retold_domain::Channel::Lexical => self.lexical,
            retold_domain::Channel::Entity => self.entity,
            retold_domain::Channel::Sentences => self.sentences,
            retold_domain::Channel::Window => self.window,
        }
    }
}
