//! Gap planning: which facts the draft lacks or guesses for this turn. Two planners: the
//! offline heuristic (query analysis of the turn, the draft's hedges and placeholders, the
//! category inventory) and a hosted planner over `CompletionClient` (prompt `gaps_v1`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use retold_domain::text::unicode61_tokens;
use retold_domain::{CompletionClient, CompletionRequest, Gap, GapKind};
use retold_policy::CategoryRule;

use crate::activation::Inventory;

/// The gaps prompt, version `gaps_v1`.
pub(super) const GAPS_V1: &str = include_str!("../prompts/gaps_v1.md");
/// Longest gap query accepted, in characters (a longer turn is cut to this).
pub const MAX_QUERY_CHARS: usize = 300;

/// What the principal could search, counted only when a planner asks: counting reads every
/// eligible record, and most drafts show their gaps without it.
#[async_trait]
pub trait InventorySource: Send + Sync {
    async fn inventory(&self) -> retold_domain::Result<Inventory>;
}

/// A counted inventory (evaluations, tests).
#[async_trait]
impl InventorySource for Inventory {
    async fn inventory(&self) -> retold_domain::Result<Inventory> {
        Ok(self.clone())
    }
}

/// What a planner reads.
#[derive(Clone, Copy)]
pub struct PlanInput<'a> {
    pub turn: &'a str,
    pub draft: &'a str,
    /// The session's profile text, if it has one.
    pub profile: Option<&'a str>,
    pub inventory: &'a dyn InventorySource,
}

impl std::fmt::Debug for PlanInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanInput")
            .field("turn", &self.turn)
            .field("draft", &self.draft)
            .finish_non_exhaustive()
    }
}

/// A planner's answer: the gaps, and the hosted tokens it spent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub gaps: Vec<Gap>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// The gap policy of a bundle.
#[async_trait]
pub trait GapPlanner: Send + Sync {
    /// The planner's gaps; `Err` says why it failed (the draft is then kept).
    async fn plan(&self, input: &PlanInput<'_>) -> Result<Plan, String>;
}

/// Phrases with which a draft admits it lacks something (lowercase, straight apostrophes).
const HEDGES: &[&str] = &[
    "i don't know",
    "i do not know",
    "i'm not sure",
    "i am not sure",
    "not sure which",
    "i'm not certain",
    "i am not certain",
    "i don't have",
    "i do not have",
    "i don't recall",
    "i do not recall",
    "i don't remember",
    "i do not remember",
    "i can't recall",
    "i cannot recall",
    "i can't remember",
    "i cannot remember",
    "you haven't told me",
    "you have not told me",
    "you haven't mentioned",
    "you have not mentioned",
    "you didn't mention",
    "you did not mention",
    "i have no information",
    "i have no record",
    "no information about",
    "i'm unable to tell",
    "i can't tell",
    "i cannot tell",
    "could you remind me",
    "can you remind me",
    "remind me what",
    "could you tell me",
    "can you tell me",
    "let me know your",
    "let me know which",
    "i'd need to know",
    "i would need to know",
    "depends on your",
    "without knowing",
];

/// Words that make a turn a question.
const QUESTION_WORDS: &[&str] = &[
    "what", "which", "when", "where", "who", "whom", "whose", "why", "how", "do", "does", "did", "is", "are",
    "was", "were", "can", "could", "should", "would", "will", "have", "has",
];

/// First-person words: the turn is about the principal.
const FIRST_PERSON: &[&str] = &["i", "me", "my", "mine", "myself", "we", "us", "our", "ours"];

/// The offline planner.
#[derive(Debug, Clone)]
pub struct HeuristicGapPlanner {
    categories: Vec<CategoryRule>,
}

impl HeuristicGapPlanner {
    /// `categories` are the activation categories, whose attribute words name what the
    /// inventory counts.
    pub fn new(categories: Vec<CategoryRule>) -> Self {
        Self { categories }
    }

    /// The gaps the draft itself shows: its hedges and placeholders.
    fn draft_gaps(&self, turn: &str, draft: &str) -> Vec<Gap> {
        let original = draft;
        let turn = clip(turn.trim());
        let draft = normalise(draft);
        let mut gaps: Vec<Gap> = Vec::new();
        if let Some(hedge) = HEDGES.iter().find(|h| draft.contains(*h)) {
            gaps.push(Gap { kind: GapKind::Hedge, query: turn.clone(), evidence: (*hedge).to_owned() });
        }
        for placeholder in placeholders(original) {
            // A bracketed placeholder names what is missing; a marker (`TBD`) does not.
            let inner = match placeholder.chars().next() {
                Some('[' | '<' | '{') => placeholder.trim_matches(|c: char| "[]<>{}".contains(c)),
                _ => "",
            };
            let words: Vec<&str> = inner
                .split_whitespace()
                .filter(|w| !matches!(w.to_lowercase().as_str(), "your" | "my" | "the" | "a" | "an"))
                .collect();
            let query =
                if words.is_empty() { turn.clone() } else { clip(&format!("{} {turn}", words.join(" "))) };
            gaps.push(Gap { kind: GapKind::Placeholder, query, evidence: placeholder });
        }
        gaps
    }

    /// The gaps of one turn and draft, in the order they were found, without duplicates: the
    /// draft's own, or else a question about the user that `inventory` can answer.
    pub fn gaps(&self, turn: &str, draft: &str, inventory: &Inventory) -> Vec<Gap> {
        let mut gaps = self.draft_gaps(turn, draft);
        if gaps.is_empty() && inventory.total > 0 && asks_about_user(turn) {
            let tokens = unicode61_tokens(turn);
            let held =
                |name: &str| inventory.categories.iter().find(|(c, _)| c == name).map_or(0, |(_, n)| *n);
            let category = self.categories.iter().find(|rule| {
                held(&rule.name) > 0
                    && rule.attributes.iter().any(|a| {
                        a.split('_')
                            .all(|part| tokens.iter().any(|t| t == part || t.strip_suffix('s') == Some(part)))
                    })
            });
            let evidence = match category {
                Some(rule) => format!("asks about {} ({} records)", rule.name, held(&rule.name)),
                None => format!("asks about the user ({} records)", inventory.total),
            };
            gaps.push(Gap { kind: GapKind::Inventory, query: clip(turn.trim()), evidence });
        }
        let mut seen = std::collections::HashSet::new();
        gaps.retain(|g| !g.query.is_empty() && seen.insert(g.query.clone()));
        gaps
    }
}

/// A question (a `?`, or a leading question word) with a first-person word in it.
fn asks_about_user(turn: &str) -> bool {
    let tokens = unicode61_tokens(turn);
    let asks = turn.contains('?') || tokens.first().is_some_and(|t| QUESTION_WORDS.contains(&t.as_str()));
    asks && tokens.iter().any(|t| FIRST_PERSON.contains(&t.as_str()))
}

#[async_trait]
impl GapPlanner for HeuristicGapPlanner {
    async fn plan(&self, input: &PlanInput<'_>) -> Result<Plan, String> {
        // The inventory is counted only when only it can show a gap.
        let inventory = if self.draft_gaps(input.turn, input.draft).is_empty() && asks_about_user(input.turn)
        {
            input.inventory.inventory().await.map_err(|e| format!("counting the inventory: {e}"))?
        } else {
            Inventory::default()
        };
        Ok(Plan { gaps: self.gaps(input.turn, input.draft, &inventory), ..Plan::default() })
    }
}

/// Lowercase with curly apostrophes straightened.
fn normalise(text: &str) -> String {
    text.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'")
}

/// At most [`MAX_QUERY_CHARS`] characters.
fn clip(text: &str) -> String {
    text.chars().take(MAX_QUERY_CHARS).collect::<String>().trim().to_owned()
}

/// Bracketed placeholders (`[your editor]`, `<name>`, `{date}`, up to 40 characters inside)
/// and the usual fill-in markers (`TBD`, `TODO`, `XXX`, `???`, `___`).
fn placeholders(draft: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (open, close) in [('[', ']'), ('<', '>'), ('{', '}')] {
        let mut rest = draft;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let inner = &after[..end];
            if !inner.trim().is_empty() && inner.chars().count() <= 40 && !inner.contains(['\n', open]) {
                found.push(format!("{open}{inner}{close}"));
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    for marker in ["TBD", "TODO", "XXX", "???", "___"] {
        if draft.split(|c: char| c.is_whitespace() || ",.;:()".contains(c)).any(|w| w == marker) {
            found.push(marker.to_owned());
        }
    }
    found
}

/// The hosted planner: `gaps_v1` through a hosted model, with a deadline.
#[derive(Clone)]
pub struct HostedGapPlanner {
    client: Arc<dyn CompletionClient>,
    model: String,
    timeout: Duration,
}

impl std::fmt::Debug for HostedGapPlanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedGapPlanner").field("model", &self.model).finish_non_exhaustive()
    }
}

impl HostedGapPlanner {
    pub const PROMPT_VERSION: &'static str = "gaps_v1";

    pub fn new(client: Arc<dyn CompletionClient>, model: impl Into<String>, timeout: Duration) -> Self {
        Self { client, model: model.into(), timeout }
    }

    fn prompt(input: &PlanInput<'_>, inventory: &Inventory) -> String {
        let mut categories: Vec<String> =
            inventory.categories.iter().filter(|(_, n)| *n > 0).map(|(c, n)| format!("{c} ({n})")).collect();
        if categories.is_empty() {
            categories.push("(none)".into());
        }
        format!(
            "User's turn:\n{}\n\nDraft answer:\n{}\n\nSession profile (already known to the assistant):\n{}\n\n\
             Memory inventory (categories and record counts; no content):\n{}\n",
            input.turn,
            input.draft,
            input.profile.filter(|p| !p.trim().is_empty()).unwrap_or("(none)"),
            categories.join(", ")
        )
    }
}

#[async_trait]
impl GapPlanner for HostedGapPlanner {
    async fn plan(&self, input: &PlanInput<'_>) -> Result<Plan, String> {
        let inventory =
            input.inventory.inventory().await.map_err(|e| format!("counting the inventory: {e}"))?;
        let request = CompletionRequest {
            model: self.model.clone(),
            system: GAPS_V1.to_owned(),
            user: Self::prompt(input, &inventory),
            schema_name: Self::PROMPT_VERSION.to_owned(),
            schema_json: serde_json::json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["gaps"],
                "properties": {"gaps": {"type": "array", "maxItems": 5, "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["query", "evidence"],
                    "properties": {"query": {"type": "string"}, "evidence": {"type": "string"}},
                }}},
            })
            .to_string(),
            max_tokens: 400,
        };
        let answer = match tokio::time::timeout(self.timeout, self.client.complete(request)).await {
            Err(_) => return Err(format!("planner: no answer within {} ms", self.timeout.as_millis())),
            Ok(Err(error)) => return Err(format!("planner: {error}")),
            Ok(Ok(answer)) => answer,
        };
        let value: serde_json::Value =
            serde_json::from_str(&answer.json).map_err(|e| format!("planner: malformed answer ({e})"))?;
        let items = value["gaps"].as_array().ok_or("planner: malformed answer (no gaps list)")?;
        let mut gaps = Vec::new();
        for item in items {
            let query = item["query"].as_str().map(str::trim).unwrap_or_default();
            if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
                return Err(format!(
                    "planner: malformed answer (a gap query of {} characters)",
                    query.chars().count()
                ));
            }
            gaps.push(Gap {
                kind: GapKind::Planned,
                query: query.to_owned(),
                evidence: item["evidence"].as_str().unwrap_or_default().chars().take(200).collect(),
            });
        }
        Ok(Plan { gaps, input_tokens: answer.input_tokens, output_tokens: answer.output_tokens })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retold_domain::Ambience;

    fn inventory(total: u64, categories: &[(&str, u64)]) -> Inventory {
        Inventory {
            categories: categories.iter().map(|(c, n)| ((*c).to_owned(), *n)).collect(),
            types: Vec::new(),
            total,
        }
    }

    fn planner() -> HeuristicGapPlanner {
        HeuristicGapPlanner::new(vec![CategoryRule {
            name: "tooling".into(),
            attributes: vec!["editor".into()],
            tags: vec![],
            ambience: Ambience::Promote,
        }])
    }

    fn gaps(turn: &str, draft: &str, inv: &Inventory) -> Vec<(GapKind, String, String)> {
        planner().gaps(turn, draft, inv).into_iter().map(|g| (g.kind, g.query, g.evidence)).collect()
    }

    #[test]
    fn a_hedging_draft_has_a_gap_searched_by_the_turn() {
        let inv = inventory(0, &[]);
        assert_eq!(
            gaps("Which editor should I set up?", "I\u{2019}m not sure which editor you use.", &inv),
            vec![(GapKind::Hedge, "Which editor should I set up?".into(), "i'm not sure".into())]
        );
    }

    #[test]
    fn each_placeholder_is_a_gap_searched_by_its_words_and_the_turn() {
        let inv = inventory(0, &[]);
        let found = gaps("Set up my machine", "Install [your editor] and set the theme to TBD.", &inv);
        assert_eq!(
            found,
            vec![
                (GapKind::Placeholder, "editor Set up my machine".into(), "[your editor]".into()),
                (GapKind::Placeholder, "Set up my machine".into(), "TBD".into()),
            ]
        );
    }

    #[test]
    fn a_confident_draft_has_a_gap_only_for_a_question_about_the_user_the_inventory_can_answer() {
        let held = inventory(3, &[("tooling", 2)]);
        assert_eq!(
            gaps("What editor do I use?", "You use an editor.", &held),
            vec![(
                GapKind::Inventory,
                "What editor do I use?".into(),
                "asks about tooling (2 records)".into()
            )]
        );
        assert_eq!(
            gaps("What is my favourite colour?", "Blue.", &held)[0].2,
            "asks about the user (3 records)"
        );
        // Not about the user, not a question, or nothing stored: no gap.
        assert!(gaps("What is Rust?", "A language.", &held).is_empty());
        assert!(gaps("Set up my editor.", "Done.", &held).is_empty());
        assert!(gaps("What editor do I use?", "You use an editor.", &inventory(0, &[])).is_empty());
    }
}
