//! The activation service and profile assembler (seed section 1): which of the principal's
//! committed semantic records are ambient, decided by an audited category policy over
//! host-verified evidence; the immutable profile a session starts with; and the content-free
//! category inventory of what the principal could search.
//!
//! Decisions are re-evaluated whenever a profile is assembled (each session start): a record
//! superseded, forgotten or expired since is withdrawn, and a
//! record whose category or policy changed is decided again; only changes are audited.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use retold_domain::{
    ActivationDecision, ActivationStore, Ambience, AuditEvent, Clock, EligibilityFilter, EligibilityIndex,
    EventKind, IdGenerator, MemoryRecord, MemoryType, Principal, ProfileBlock, ProfileEntry, RecordId,
    RecordReader, Result, ReviewId, ReviewItem, ReviewReason, ReviewVerdict, Scope, Session, SessionId,
};
use retold_policy::{CategoryRule, SessionContext, candidacy, categorize, condition_holding, conditions};
use retold_retrieve::Retriever;
use sha2::{Digest, Sha256};

use crate::sessions::app_event;

/// The category rules (in priority order, the last is the default) and the profile's budget.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivationConfig {
    pub categories: Vec<CategoryRule>,
    /// Tokens the rendered profile may take (whole records only).
    pub profile_token_budget: usize,
}

/// What the principal could search, without content: counts per category (semantic records)
/// and per memory type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inventory {
    pub categories: Vec<(String, u64)>,
    pub types: Vec<(MemoryType, u64)>,
    pub total: u64,
}

/// Activation decisions, profiles and the inventory.
#[derive(Clone)]
pub struct ActivationService {
    retriever: Retriever,
    eligibility: Arc<dyn EligibilityIndex>,
    records: Arc<dyn RecordReader>,
    entities: Arc<dyn retold_domain::EntityReader>,
    store: Arc<dyn ActivationStore>,
    config: ActivationConfig,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for ActivationService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActivationService").field("config", &self.config).finish_non_exhaustive()
    }
}

impl ActivationService {
    pub fn new(
        stores: &crate::Stores,
        retriever: Retriever,
        config: ActivationConfig,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            retriever,
            eligibility: stores.eligibility.clone(),
            records: stores.records.clone(),
            entities: stores.entities.clone(),
            store: stores.activation.clone(),
            config,
            clock,
            ids,
        }
    }

    /// The records `filter` admits, read in one batch.
    async fn eligible_records(&self, filter: &EligibilityFilter) -> Result<Vec<MemoryRecord>> {
        let ids: Vec<RecordId> = self.eligibility.eligible(filter).await?.into_iter().map(|e| e.id).collect();
        self.records.get_many(&ids).await
    }

    /// The scopes whose records are about the principal (its user scope and its agent's
    /// scope of that user), as far as it can read them.
    async fn about(&self, principal: &Principal) -> Result<Vec<Scope>> {
        let access = self.retriever.access(principal).await?;
        let mine = [
            Scope::parse(&format!("user:{}", principal.user_id))?,
            Scope::parse(&format!("agent:{}/{}", principal.agent_id, principal.user_id))?,
        ];
        Ok(mine.into_iter().filter(|s| access.readable.contains(s)).collect())
    }

    /// Decide (again) about every candidate record of the principal, store and audit what
    /// changed, open a review for each new `review` decision, and withdraw decisions whose
    /// record is no longer committed and current. Returns the current decisions with their
    /// records. Records about the principal: those in its user scope (or its agent's scope of
    /// that user), and those in any scope it reads whose subject is a person entity that
    /// records of its user scope are about (the user's own entity).
    pub async fn evaluate(&self, principal: &Principal) -> Result<Vec<(ActivationDecision, MemoryRecord)>> {
        let now = self.clock.now();
        let mine = self.about(principal).await?;
        let scopes = self.retriever.access(principal).await?.readable;
        let filter = EligibilityFilter {
            scopes: scopes.clone(),
            statuses: vec![retold_domain::Status::Confirmed],
            now,
            types: Some(vec![MemoryType::Semantic]),
            event_from: None,
            event_to: None,
            include_conflicts: false,
            // Never a turn kept verbatim: what becomes ambient is a distilled fact.
            origins: Some(vec![retold_domain::Origin::Memory]),
            excluded_session: None,
        };
        let committed = self.eligible_records(&filter).await?;
        // The user's own entity: a person that records of the user's scope are about and whose
        // name or an alias is the user's id (a user's records also describe other people, whose
        // facts are not the user's).
        let user = retold_domain::fold_name(principal.user_id.as_str());
        let mut people = Vec::new();
        let mut looked = Vec::new();
        for subject in committed.iter().filter(|r| mine.contains(&r.scope)).filter_map(|r| r.key.as_ref()) {
            let id = &subject.subject_entity_id;
            if looked.contains(id) {
                continue;
            }
            looked.push(id.clone());
            let Some(entity) = self.entities.entity(id).await? else { continue };
            if entity.kind != retold_domain::EntityKind::Person {
                continue;
            }
            let named = entity.canonical_name.folded() == user
                || self.entities.aliases(id).await?.iter().any(|a| a.folded() == user);
            if named {
                people.push(id.clone());
            }
        }
        let committed_ids: HashSet<RecordId> = committed.iter().map(|r| r.id.clone()).collect();
        let records: Vec<MemoryRecord> = committed
            .into_iter()
            .filter(|r| {
                mine.contains(&r.scope)
                    || r.key.as_ref().is_some_and(|k| people.contains(&k.subject_entity_id))
            })
            .collect();
        let stored: HashMap<RecordId, ActivationDecision> =
            self.store.decisions_in(&scopes).await?.into_iter().map(|d| (d.record_id.clone(), d)).collect();
        let (mut current, mut changed, mut reviews, mut events) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for record in records {
            let Ok(basis) = candidacy(&record, now) else { continue };
            let (rule, matched) = categorize(&record, &self.config.categories);
            let mut decision = ActivationDecision {
                record_id: record.id.clone(),
                category: rule.name.clone(),
                rule: matched,
                ambience: rule.ambience,
                conditions: if rule.ambience == Ambience::Conditional { conditions(&record) } else { vec![] },
                basis,
                decided_at: now,
                verdict: None,
            };
            let old = stored.get(&record.id);
            // A rejection stands whatever the record's category becomes; an approval holds within
            // its category.
            decision.verdict = old.and_then(|old| match old.verdict {
                Some(ReviewVerdict::Approved) if old.category != decision.category => None,
                verdict => verdict,
            });
            match old {
                Some(old) if old.same_as(&decision) => decision = old.clone(),
                _ => {
                    events.push(self.decided_event(&decision, principal));
                    if decision.ambience == Ambience::Review && decision.verdict.is_none() {
                        reviews.push(ReviewItem {
                            id: ReviewId::from_body(&self.ids.next_body()).expect("generated ids are valid"),
                            record_id: record.id.clone(),
                            reason: ReviewReason::Activation,
                            flagged_at: now,
                            resolved: None,
                        });
                    }
                    changed.push(decision.clone());
                }
            }
            current.push((decision, record));
        }
        // A decision is withdrawn when its record is no longer committed and current; a record
        // that is simply not about this principal keeps the decision another principal's
        // evaluation made.
        let withdrawn: Vec<RecordId> =
            stored.keys().filter(|id| !committed_ids.contains(*id)).cloned().collect();
        for id in &withdrawn {
            let mut event = app_event(
                self.ids.as_ref(),
                self.clock.as_ref(),
                EventKind::ActivationWithdrawn,
                Some(principal),
                &[("reason", "no longer a committed, current, verified semantic record".to_owned())],
            );
            event.record_id = Some(id.clone());
            events.push(event);
        }
        self.store.record_decisions(&changed, &withdrawn, &reviews, events).await?;
        Ok(current)
    }

    fn decided_event(&self, d: &ActivationDecision, principal: &Principal) -> AuditEvent {
        let mut event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::ActivationDecided,
            Some(principal),
            &[
                ("category", d.category.clone()),
                ("rule", d.rule.clone()),
                ("policy", d.ambience.as_str().to_owned()),
                ("conditions", d.conditions.join(",")),
                ("basis", d.basis.clone()),
            ],
        );
        event.record_id = Some(d.record_id.clone());
        event
    }

    /// Assemble and store the profile `session` starts with: the promoted records, the
    /// approved ones, and the conditional ones whose condition holds for the session (its
    /// project, its agent, or one of `tags`), ordered by category priority then newest
    /// first, cut to the token budget by whole records.
    pub async fn assemble(
        &self,
        principal: &Principal,
        session: &Session,
        tags: &[String],
    ) -> Result<ProfileBlock> {
        let decisions = self.evaluate(principal).await?;
        let context = SessionContext {
            project: session.project_id.as_ref().map(|p| p.to_string()),
            agent: session.agent_id.to_string(),
            tags: tags.to_vec(),
        };
        let priority: HashMap<&str, usize> =
            self.config.categories.iter().enumerate().map(|(i, c)| (c.name.as_str(), i)).collect();
        let mut ambient: Vec<(usize, &ActivationDecision, &MemoryRecord, String)> = decisions
            .iter()
            .filter_map(|(d, r)| {
                let why = match (d.ambience, d.verdict) {
                    (_, Some(ReviewVerdict::Rejected)) => return None,
                    (Ambience::Promote, _) => format!("{}: promote ({})", d.category, d.rule),
                    (Ambience::Review, Some(ReviewVerdict::Approved)) => {
                        format!("{}: approved in review ({})", d.category, d.rule)
                    }
                    (Ambience::Review, None) => return None,
                    (Ambience::Conditional, _) => {
                        let holding = condition_holding(&d.conditions, &context)?;
                        format!("{}: conditional, {holding} holds ({})", d.category, d.rule)
                    }
                };
                Some((priority.get(d.category.as_str()).copied().unwrap_or(usize::MAX), d, r, why))
            })
            .collect();
        let recency = |r: &MemoryRecord| r.last_reinforced_at.unwrap_or(r.created_at);
        ambient.sort_by(|a, b| a.0.cmp(&b.0).then(recency(b.2).cmp(&recency(a.2))).then(a.2.id.cmp(&b.2.id)));
        let header = format!("What you know about {} (Retold profile):", principal.user_id);
        let mut text = header.clone();
        let mut spent = retold_retrieve::text_tokens(&header);
        let (mut entries, mut cut) = (Vec::new(), 0u32);
        for (_, d, r, why) in ambient {
            let line = format!("\n- [{}] {}", d.category, r.content.as_str());
            let cost = retold_retrieve::text_tokens(&line);
            if spent + cost > self.config.profile_token_budget {
                cut += 1;
                continue;
            }
            spent += cost;
            text.push_str(&line);
            entries.push(ProfileEntry { record_id: r.id.clone(), category: d.category.clone(), why });
        }
        if entries.is_empty() {
            text.push_str("\n(nothing yet)");
            spent = retold_retrieve::text_tokens(&text);
        }
        let profile = ProfileBlock {
            session_id: session.id.clone(),
            // Stored to the millisecond: the answer at issue is exactly what reads return.
            created_at: retold_domain::chrono::DateTime::from_timestamp_millis(
                self.clock.now().timestamp_millis(),
            )
            .expect("now is a valid time"),
            content_hash: format!("{:x}", Sha256::digest(text.as_bytes())),
            text,
            entries,
            tokens: u32::try_from(spent).unwrap_or(u32::MAX),
            cut,
        };
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::ProfileAssembled,
            Some(principal),
            &[
                ("session_id", session.id.to_string()),
                ("records", profile.entries.len().to_string()),
                ("cut", cut.to_string()),
                ("content_hash", profile.content_hash.clone()),
            ],
        );
        self.store.put_profile(&profile, event).await?;
        Ok(profile)
    }

    /// A session's profile as it was issued.
    pub async fn profile(&self, session: &SessionId) -> Result<Option<ProfileBlock>> {
        self.store.profile(session).await
    }

    /// Counts of what the principal could search (the search's own eligibility), per category
    /// and per type. No content, no subjects, no ids.
    pub async fn inventory(&self, principal: &Principal) -> Result<Inventory> {
        let access = self.retriever.access(principal).await?;
        let filter = EligibilityFilter {
            scopes: access.readable.clone(),
            statuses: EligibilityFilter::statuses_for(false),
            now: self.clock.now(),
            types: None,
            event_from: None,
            event_to: None,
            include_conflicts: false,
            origins: None,
            excluded_session: None,
        };
        let records = self.eligible_records(&filter).await?;
        let mut categories: BTreeMap<usize, u64> = BTreeMap::new();
        let mut types: BTreeMap<&'static str, (MemoryType, u64)> = BTreeMap::new();
        for record in &records {
            types.entry(record.memory_type.as_str()).or_insert((record.memory_type, 0)).1 += 1;
            if record.memory_type == MemoryType::Semantic {
                let (rule, _) = categorize(record, &self.config.categories);
                let at = self.config.categories.iter().position(|c| c.name == rule.name).unwrap_or(0);
                *categories.entry(at).or_default() += 1;
            }
        }
        Ok(Inventory {
            categories: categories
                .into_iter()
                .map(|(i, n)| (self.config.categories[i].name.clone(), n))
                .collect(),
            types: types.into_values().collect(),
            total: records.len() as u64,
        })
    }
}
