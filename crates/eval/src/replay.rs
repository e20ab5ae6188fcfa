//! How an evaluation stores a dataset's conversations: through which door (the sessions
//! service a host uses, or `memory_write` as the harness wrote turns before turn memory),
//! and in which layout (a store per conversation, one store with a user per conversation,
//! or one project scope shared by all), so the figures are those of what a user gets.

use std::collections::HashMap;

use anyhow::{Context, Result, bail};
use retold_app::TurnInput;
use retold_domain::chrono::{DateTime, Utc};
use retold_domain::{AgentId, Name, Principal, RecordId, Scope, TurnRole, UserId};

use crate::eval::{AGENT, World, cites, principal, turn_request, write_request};

/// How turns reach the store (`--door`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Door {
    /// The sessions service: start, append each turn with its time and speaker, end; turn
    /// memory keeps each turn (what the adapters and any host do).
    Sessions,
    /// Each turn written with `memory_write` as an episodic record, its speaker the subject
    /// (the harness before turn memory, kept for comparison).
    Write,
}

impl Door {
    pub(crate) fn parse(value: &str) -> Result<Self> {
        match value {
            "sessions" => Ok(Self::Sessions),
            "write" => Ok(Self::Write),
            other => bail!("--door takes sessions or write, not {other:?}"),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Sessions => "sessions",
            Self::Write => "write",
        }
    }
}

/// Where conversations are stored (`--layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// A fresh store for each conversation (or LongMemEval haystack).
    PerConversation,
    /// One store; each conversation under its own user, in that user's private scope, as a
    /// service holds its users.
    PerUser,
    /// One store; every conversation in one project scope, as one team's shared memory holds
    /// them: every question searches every conversation.
    OneScope,
}

/// The project scope of the one-scope layout.
const TEAM: &str = "project:team";

impl Layout {
    pub(crate) const ALL: [Layout; 3] = [Self::PerConversation, Self::PerUser, Self::OneScope];

    pub(crate) fn parse(value: &str) -> Result<Vec<Self>> {
        match value {
            "all" => Ok(Self::ALL.to_vec()),
            "per-conversation" => Ok(vec![Self::PerConversation]),
            "per-user" => Ok(vec![Self::PerUser]),
            "one-scope" => Ok(vec![Self::OneScope]),
            other => bail!("--layout takes per-conversation, per-user, one-scope or all, not {other:?}"),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::PerConversation => "per-conversation",
            Self::PerUser => "per-user",
            Self::OneScope => "one-scope",
        }
    }

    /// Whether one store holds every conversation.
    pub(crate) fn shared(self) -> bool {
        self != Self::PerConversation
    }

    /// Who stores and asks about conversation `owner`: the harness's one user in a store of
    /// its own, else a user per conversation.
    pub(crate) fn principal(self, owner: &str) -> Result<Principal> {
        match self {
            Self::PerConversation => Ok(principal()),
            Self::PerUser | Self::OneScope => Ok(Principal::new(
                AgentId::new(AGENT)?,
                UserId::new(owner).with_context(|| format!("conversation {owner:?} as a user id"))?,
            )),
        }
    }

    /// The scope conversation `owner` is kept in (granted to the harness's agent when it
    /// needs a grant): a project of its own, the user's private scope, or the team's.
    pub(crate) fn scope(self, owner: &str) -> Result<Scope> {
        match self {
            Self::PerConversation => {
                Ok(Scope::parse(&format!("project:{}", owner.replace(|c: char| !c.is_alphanumeric(), "-")))?)
            }
            Self::PerUser => Ok(self.principal(owner)?.private_scope()),
            Self::OneScope => Ok(Scope::parse(TEAM)?),
        }
    }
}

/// One turn of a conversation, as a host has it.
#[derive(Debug, Clone)]
pub(crate) struct ReplayTurn {
    /// What the dataset calls it (a LoCoMo dialog id, a LongMemEval session and turn).
    pub(crate) key: String,
    pub(crate) role: TurnRole,
    /// Who spoke, when the dataset names them (LoCoMo's two people).
    pub(crate) speaker: Option<String>,
    pub(crate) content: String,
    pub(crate) at: DateTime<Utc>,
}

/// One dataset session: its id and its turns, in order.
#[derive(Debug, Clone)]
pub(crate) struct ReplaySession {
    pub(crate) id: String,
    pub(crate) turns: Vec<ReplayTurn>,
}

/// Store `sessions` of conversation `owner` in `world` through `door` as `layout` keeps them:
/// every record written and the key of the turn it keeps (several records for a turn longer
/// than a record holds). `context`: whether a turn is kept with the end of the one before.
pub(crate) async fn store(
    world: &World,
    door: Door,
    layout: Layout,
    owner: &str,
    sessions: &[ReplaySession],
    context: bool,
) -> Result<Vec<(RecordId, String)>> {
    let who = layout.principal(owner)?;
    let scope = layout.scope(owner)?;
    let mut out = Vec::new();
    for session in sessions {
        match door {
            Door::Sessions => {
                // The private scope is a session's own default; any other is named.
                let named = (scope != who.private_scope()).then(|| scope.clone());
                let started = world.sessions.start(&who, named).await?;
                for turn in &session.turns {
                    let input = TurnInput {
                        role: turn.role,
                        content: turn.content.clone(),
                        speaker: turn.speaker.as_deref().map(Name::new).transpose()?,
                        at: Some(turn.at),
                    };
                    let appended = world
                        .sessions
                        .append(&who, started.id.as_str(), input)
                        .await
                        .with_context(|| format!("{owner}: turn {}", turn.key))?;
                    let kept = appended.memory.records();
                    if kept.is_empty() {
                        bail!("{owner}: turn {} was not kept ({})", turn.key, appended.memory.status());
                    }
                    out.extend(kept.iter().map(|id| (id.clone(), turn.key.clone())));
                }
                world.sessions.end(&who, started.id.as_str(), false).await?;
            }
            Door::Write => {
                for (i, turn) in session.turns.iter().enumerate() {
                    // As the harness wrote transcripts: a named speaker's label on the content,
                    // the speaker (else the user or the agent) the subject, the turn before in
                    // the same session the context, a session citation.
                    let subject = turn.speaker.clone().unwrap_or_else(|| match turn.role {
                        TurnRole::User => who.user_id.to_string(),
                        TurnRole::Assistant | TurnRole::Tool => who.agent_id.to_string(),
                    });
                    let said = |t: &ReplayTurn| match &t.speaker {
                        Some(speaker) => format!("{speaker}: {}", t.content),
                        None => t.content.clone(),
                    };
                    let before = i.checked_sub(1).filter(|_| context).map(|j| said(&session.turns[j]));
                    let mut request =
                        turn_request(&scope, &said(turn), Some(&subject), before.as_deref(), turn.at)?;
                    request.source_ref = Some(cites(&session.id, i + 1)?);
                    out.push((write_request(world, &who, &request).await?, turn.key.clone()));
                }
            }
        }
    }
    // Every turn fully indexed (its sentence vectors attach after its answer) before a search.
    world.ingestor.settled().await;
    Ok(out)
}

/// Records by the turn they keep: each record's canonical id (the first record stored for
/// its turn key), so that a turn kept in parts, or stored twice (LongMemEval haystacks share
/// sessions), counts once where it ranks first.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    canonical: HashMap<RecordId, RecordId>,
    first: HashMap<String, RecordId>,
    owner: HashMap<RecordId, String>,
    key: HashMap<RecordId, String>,
    keys_of: HashMap<String, std::collections::HashSet<String>>,
}

impl Turns {
    /// Add what `store` wrote for conversation `owner`.
    pub(crate) fn add(&mut self, owner: &str, written: Vec<(RecordId, String)>) {
        for (id, key) in written {
            let first = self.first.entry(key.clone()).or_insert_with(|| id.clone()).clone();
            self.owner.insert(id.clone(), owner.to_owned());
            self.keys_of.entry(owner.to_owned()).or_default().insert(key.clone());
            self.key.insert(id.clone(), key);
            self.canonical.insert(id, first);
        }
    }

    /// Whether any of `retrieved` is a turn `owner`'s conversation does not hold (a copy of
    /// one of its own sessions stored for another conversation is not).
    pub(crate) fn foreign_turn(&self, owner: &str, retrieved: &[RecordId]) -> bool {
        let own = self.keys_of.get(owner);
        retrieved.iter().any(|id| self.key.get(id).is_some_and(|k| !own.is_some_and(|o| o.contains(k))))
    }

    /// The canonical record of a turn key.
    pub(crate) fn of_key(&self, key: &str) -> Option<&RecordId> {
        self.first.get(key)
    }

    /// A ranking of records as a ranking of turns: canonical ids, each once, in the order
    /// its first record ranks.
    pub(crate) fn ranked(&self, retrieved: &[RecordId]) -> Vec<RecordId> {
        let mut seen = std::collections::HashSet::new();
        retrieved
            .iter()
            .filter_map(|id| self.canonical.get(id).cloned())
            .filter(|id| seen.insert(id.clone()))
            .collect()
    }

    /// Whether any of `retrieved` belongs to another conversation than `owner`.
    pub(crate) fn foreign(&self, owner: &str, retrieved: &[RecordId]) -> Option<RecordId> {
        retrieved.iter().find(|id| self.owner.get(*id).is_some_and(|o| o != owner)).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> RecordId {
        RecordId::new(format!("mem_{n:04}")).unwrap()
    }

    #[test]
    fn a_turn_in_parts_or_stored_twice_ranks_once_where_it_first_ranks() {
        let mut turns = Turns::default();
        turns.add("a", vec![(id(1), "s1#1".into()), (id(2), "s1#1".into()), (id(3), "s1#2".into())]);
        turns.add("b", vec![(id(4), "s1#2".into()), (id(5), "s9#1".into())]);
        assert_eq!(turns.ranked(&[id(2), id(4), id(1), id(5), id(3)]), [id(1), id(3), id(5)]);
        assert_eq!(turns.of_key("s1#2"), Some(&id(3)));
        assert_eq!(turns.foreign("a", &[id(1), id(3)]), None);
        assert_eq!(turns.foreign("a", &[id(1), id(5)]), Some(id(5)));
        // b's copy of a turn of a's is another user's record, not another conversation's turn.
        assert_eq!(turns.foreign("a", &[id(4)]), Some(id(4)));
        assert!(!turns.foreign_turn("a", &[id(1), id(4)]) && turns.foreign_turn("a", &[id(5)]));
    }

    #[test]
    fn each_layout_names_its_principal_and_scope() {
        assert_eq!(Layout::PerConversation.scope("conv-26").unwrap().to_string(), "project:conv-26");
        assert_eq!(Layout::PerUser.scope("conv-26").unwrap().to_string(), "agent:eval-agent/conv-26");
        assert_eq!(Layout::OneScope.scope("conv-26").unwrap().to_string(), "project:team");
        assert_eq!(Layout::PerUser.principal("conv-26").unwrap().user_id.as_str(), "conv-26");
        assert!(Layout::parse("everywhere").is_err() && Door::parse("window").is_err());
    }
}
