//! Activation rules (seed section 1, "Activation service"): which category a semantic record
//! falls in, whether it is a candidate for ambience at all, and what its category's policy
//! decides. Pure; the service stores and audits the decisions.

use retold_domain::{Ambience, MemoryRecord, MemoryType, SourceKind, Status, Timestamp};

/// One category: the attribute words and tags that put a record in it, and its policy.
/// Categories are tried in order (their order is also the profile's priority); the first
/// whose rule matches wins, and a record no rule matches falls in the last, `default` one.
#[derive(Debug, Clone, PartialEq)]
pub struct CategoryRule {
    pub name: String,
    /// Attribute patterns: `style` matches `explanation_style`; `time_zone` matches
    /// `home_time_zone` (whole `_`-separated words, in order).
    pub attributes: Vec<String>,
    pub tags: Vec<String>,
    pub ambience: Ambience,
}

/// How restrictive a policy is: when several categories match, the most restrictive wins, so
/// `medication_schedule` (schedule, promote) tagged `health` (review) waits for review.
fn restrictiveness(ambience: Ambience) -> u8 {
    match ambience {
        Ambience::Promote => 0,
        Ambience::Conditional => 1,
        Ambience::Review => 2,
    }
}

/// Which category `record` falls in and the rule that matched: of every category whose
/// attribute words or tags match, the one with the most restrictive policy (the first of
/// those in order); the last category when none matches.
pub fn categorize<'a>(record: &MemoryRecord, rules: &'a [CategoryRule]) -> (&'a CategoryRule, String) {
    let attribute = record.key.as_ref().map(|k| k.attribute.as_str().to_owned()).unwrap_or_default();
    let words: Vec<&str> = attribute.split('_').filter(|w| !w.is_empty()).collect();
    let matched = |rule: &CategoryRule| -> Option<String> {
        for pattern in &rule.attributes {
            let wanted: Vec<&str> = pattern.split('_').filter(|w| !w.is_empty()).collect();
            if !wanted.is_empty() && words.windows(wanted.len()).any(|w| w == wanted.as_slice()) {
                return Some(format!("attribute {attribute} ~ {pattern}"));
            }
        }
        record
            .tags
            .iter()
            .find(|t| rule.tags.iter().any(|r| r == t.as_str()))
            .map(|tag| format!("tag {}", tag.as_str()))
    };
    let mut best: Option<(&CategoryRule, String)> = None;
    for rule in rules {
        if let Some(why) = matched(rule)
            && best.as_ref().is_none_or(|(b, _)| restrictiveness(rule.ambience) > restrictiveness(b.ambience))
        {
            best = Some((rule, why));
        }
    }
    best.unwrap_or_else(|| {
        (rules.last().expect("the configuration has at least the default category"), "default".to_owned())
    })
}

/// Why `record` may be ambient, or why not: a confirmed, current, unexpired semantic record
/// whose evidence the host path verified (a user statement or tool result keeps its source
/// kind only when its evidence was found verbatim and entails the content; a failed check
/// makes it an agent inference) or a system record.
pub fn candidacy(record: &MemoryRecord, now: Timestamp) -> Result<String, String> {
    if record.memory_type != MemoryType::Semantic {
        return Err(format!("a {} record is never ambient", record.memory_type.as_str()));
    }
    if record.status != Status::Confirmed {
        return Err(format!("a {} record is not committed", record.status.as_str()));
    }
    if record.expires_at.is_some_and(|at| at <= now) {
        return Err("its expiry passed".to_owned());
    }
    match record.source_kind {
        SourceKind::UserStatement | SourceKind::ToolResult if record.evidence.is_some() => {
            Ok(format!("{} with verified evidence", record.source_kind.as_str()))
        }
        SourceKind::System => Ok("system record".to_owned()),
        other => Err(format!("a {} is not host-verified evidence", other.as_str())),
    }
}

/// The conditions a conditional record's tags name: `project:<p>`, `agent:<a>`, or any other
/// tag the host may pass when it starts a session.
pub fn conditions(record: &MemoryRecord) -> Vec<String> {
    record.tags.iter().map(|t| t.as_str().to_owned()).collect()
}

/// What a session is, for conditional ambience.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionContext {
    pub project: Option<String>,
    pub agent: String,
    pub tags: Vec<String>,
}

/// The condition that holds for `session`, if any: a tag the host passed, or the session's
/// own project or agent named as `project:<p>` / `agent:<a>`.
pub fn condition_holding(conditions: &[String], session: &SessionContext) -> Option<String> {
    conditions
        .iter()
        .find(|c| {
            session.tags.iter().any(|t| t == *c)
                || match c.split_once(':') {
                    Some(("project", p)) => session.project.as_deref() == Some(p),
                    Some(("agent", a)) => session.agent == a,
                    _ => false,
                }
        })
        .cloned()
}
