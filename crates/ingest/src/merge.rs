//! Entity merge through the write path (`memory_revise` merge, and the admin's merge).
//!
//! A merge touches only the records its caller may read and write: their subject moves to the
//! surviving entity (version bumped, audited) and their links follow. Two current records that
//! now share a current-fact key are resolved by the seed's rules (section 7) with the merged
//! entity's current record as the candidate against the survivor's: same meaning reinforces
//! the survivor's record, an equal or higher source rank supersedes it, a lower rank links
//! both as a conflict. Records the caller cannot touch keep their subject and links; lookups
//! of the survivor still reach them through `merged_into`.

use std::collections::BTreeMap;

use retold_domain::text::same_values;
use retold_domain::{
    AuditEvent, ConflictLink, DomainError, EntityId, EntityMerge, EventKind, FactKey, KeyedRecord,
    MemoryRecord, Principal, RecordId, RecordUpdate, Result, Scope, Status,
};
use retold_policy::{FactDecision, Reinforcement, ScopeAccess, decide, reinforce, transition};

use crate::ingestor::Ingestor;
use crate::judge::cosine;
use crate::request::{RejectCode, RevisionOutcome};

/// On whose authority a merge runs.
#[derive(Debug, Clone, Copy)]
pub enum MergeAuthority<'a> {
    /// An agent through `memory_revise`: only scopes it may read and write.
    Principal(&'a Principal),
    /// The host's admin key: every scope.
    Admin,
}

/// The records of one change set, each updated at most once.
#[derive(Default)]
struct Changes {
    next: BTreeMap<RecordId, (u32, MemoryRecord)>,
    conflicts: Vec<ConflictLink>,
    events: Vec<AuditEvent>,
}

impl Changes {
    /// The record as this merge will store it (a version above the stored one, once).
    fn edit(&mut self, stored: &MemoryRecord) -> &mut MemoryRecord {
        &mut self
            .next
            .entry(stored.id.clone())
            .or_insert_with(|| {
                let mut next = stored.clone();
                next.version += 1;
                (stored.version, next)
            })
            .1
    }
}

impl Ingestor {
    /// Merge entity `from` into `into` on `authority`.
    pub async fn merge_entities(
        &self,
        authority: MergeAuthority<'_>,
        from: &EntityId,
        into: &EntityId,
    ) -> Result<RevisionOutcome> {
        let access = match authority {
            MergeAuthority::Principal(principal) => Some(self.access(principal).await?),
            MergeAuthority::Admin => None,
        };
        for id in [from, into] {
            let entity = self.ports.entities.entity(id).await?;
            match (&entity, &access, authority) {
                (Some(e), Some(access), MergeAuthority::Principal(principal))
                    if access.can_read(&e.scope) =>
                {
                    if !access.can_write(&e.scope) {
                        let reason = format!("entity {id} lives in {}, which is not writable", e.scope);
                        return self
                            .reject(principal, RejectCode::ScopeNotWritable, reason)
                            .await
                            .map(RevisionOutcome::from);
                    }
                }
                (Some(_), None, _) => {}
                _ => return Err(DomainError::NotFound { what: "entity", id: id.to_string() }),
            }
            if entity.is_some_and(|e| e.merged_into.is_some()) {
                return Err(DomainError::Conflict(format!("entity {id} was already merged")));
            }
        }
        if from == into {
            return Err(DomainError::Conflict(format!("cannot merge entity {from} into itself")));
        }
        let actor = match authority {
            MergeAuthority::Principal(p) => Some(p),
            MergeAuthority::Admin => None,
        };
        self.retrying(|| self.merge_once(access.as_ref(), actor, from, into)).await?;
        Ok(RevisionOutcome::EntitiesMerged { from: from.clone(), into: into.clone() })
    }

    async fn merge_once(
        &self,
        access: Option<&ScopeAccess>,
        actor: Option<&Principal>,
        from: &EntityId,
        into: &EntityId,
    ) -> Result<()> {
        let now = self.ports.clock.now();
        // Only scopes the caller may both read and write are touched (reads stay within the
        // readable scopes, as everywhere in the write path).
        let scopes: Option<Vec<Scope>> =
            access.map(|a| a.readable.iter().filter(|s| a.can_write(s)).cloned().collect());
        let moved = self.ports.facts.by_subject(scopes.as_deref(), from).await?;
        let mut changes = Changes::default();
        let event = |kind: EventKind, record: Option<&RecordId>| -> AuditEvent {
            let mut event = self.event_by(kind, record, actor.map(|p| &p.agent_id));
            event.details.insert("merge_from".into(), from.to_string());
            event.details.insert("merge_into".into(), into.to_string());
            event
        };
        for keyed in &moved {
            let next = changes.edit(&keyed.record);
            if let Some(key) = &next.key {
                next.key = Some(FactKey::new(into.clone(), key.attribute.clone()));
            }
            changes.events.push(event(EventKind::RecordResubjected, Some(&keyed.record.id)));
        }

        // Current-fact resolution, per scope and attribute.
        let mut groups: BTreeMap<(Scope, String), Vec<&KeyedRecord>> = BTreeMap::new();
        for keyed in &moved {
            let r = &keyed.record;
            if let Some(key) = &r.key
                && r.memory_type.has_current_fact_key()
                && r.status.is_active()
                && !r.is_expired_at(now)
            {
                groups.entry((r.scope.clone(), key.attribute.as_str().to_owned())).or_default().push(keyed);
            }
        }
        for ((scope, attribute), side) in groups {
            let existing =
                self.ports.facts.active_by_key(std::slice::from_ref(&scope), into, &attribute).await?;
            let live: Vec<&KeyedRecord> = existing.iter().filter(|k| !k.record.is_expired_at(now)).collect();
            let (Some(current), Some(candidate)) = (top(&live), top(&side)) else { continue };
            let similarity =
                cosine(&self.content_vector(candidate).await?, &self.content_vector(current).await?);
            let same_meaning = similarity >= self.config.same_meaning_floor
                && same_values(candidate.record.content.as_str(), current.record.content.as_str());
            match decide(&current.record, candidate.record.source_kind, same_meaning) {
                FactDecision::Reinforce => {
                    let rules = Reinforcement {
                        confidence_step: self.config.reinforcement_step,
                        to_confirm: self.config.reinforcements_to_confirm,
                        provisional_ttl: self.config.provisional_ttl,
                    };
                    let reinforced = reinforce(&current.record, now, &rules);
                    let next = changes.edit(&current.record);
                    next.reinforcements = reinforced.reinforcements;
                    next.last_reinforced_at = reinforced.last_reinforced_at;
                    next.confidence = reinforced.confidence;
                    next.status = reinforced.status;
                    next.expires_at = reinforced.expires_at;
                    let mut reinforced_event = event(EventKind::RecordReinforced, Some(&current.record.id));
                    reinforced_event
                        .details
                        .insert("same_meaning_as".into(), candidate.record.id.to_string());
                    changes.events.push(reinforced_event);
                    transition(candidate.record.status, Status::Superseded)?;
                    changes.edit(&candidate.record).status = Status::Superseded;
                    let mut resolution = event(EventKind::RecordSuperseded, Some(&candidate.record.id));
                    resolution.details.insert("similarity".into(), format!("{similarity:.4}"));
                    resolution.details.insert("superseded_by".into(), current.record.id.to_string());
                    resolution.details.insert("reason".into(), "same meaning after the entity merge".into());
                    changes.events.push(resolution);
                }
                FactDecision::Supersede => {
                    for old in &live {
                        transition(old.record.status, Status::Superseded)?;
                        changes.edit(&old.record).status = Status::Superseded;
                        let mut superseded = event(EventKind::RecordSuperseded, Some(&old.record.id));
                        superseded.details.insert("similarity".into(), format!("{similarity:.4}"));
                        superseded.details.insert("superseded_by".into(), candidate.record.id.to_string());
                        superseded.details.insert(
                            "reason".into(),
                            format!(
                                "{} (rank {}) replaces {} (rank {}) after the entity merge",
                                candidate.record.source_kind,
                                candidate.record.source_kind.rank(),
                                old.record.source_kind,
                                old.record.source_kind.rank()
                            ),
                        );
                        changes.events.push(superseded);
                    }
                    changes.edit(&candidate.record).supersedes_id = Some(current.record.id.clone());
                }
                FactDecision::Conflict => {
                    // The lower-ranked record is linked as the conflict; the higher-ranked one
                    // stays the normal result. A confirmed record is never demoted to
                    // provisional (the lifecycle refuses that transition).
                    changes.conflicts.push(ConflictLink {
                        record_id: current.record.id.clone(),
                        conflicting_id: candidate.record.id.clone(),
                    });
                    let mut conflict = event(EventKind::RecordConflicting, Some(&candidate.record.id));
                    conflict.details.insert("conflicts_with".into(), current.record.id.to_string());
                    conflict.details.insert("similarity".into(), format!("{similarity:.4}"));
                    changes.events.push(conflict);
                }
            }
        }

        let mut merged = event(EventKind::EntityMerged, None);
        merged.details.insert("resubjected".into(), moved.len().to_string());
        merged.details.insert(
            "scopes".into(),
            scopes.as_ref().map_or_else(
                || "all".to_owned(),
                |s| s.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
            ),
        );
        // Keep the historical field names of the merge event.
        merged.details.insert("from".into(), from.to_string());
        merged.details.insert("into".into(), into.to_string());
        let mut events = vec![merged];
        events.append(&mut changes.events);
        let updates = changes
            .next
            .into_values()
            .map(|(expected_version, record)| RecordUpdate { record, expected_version })
            .collect();
        self.ports
            .entity_writer
            .merge(EntityMerge {
                from: from.clone(),
                into: into.clone(),
                scopes,
                updates,
                conflicts: changes.conflicts,
                events,
            })
            .await
    }
}

/// The current record of one side: confirmed before provisional, then the newest.
fn top<'a>(side: &[&'a KeyedRecord]) -> Option<&'a KeyedRecord> {
    side.iter().copied().filter(|k| k.record.status == Status::Confirmed).max_by_key(|k| k.key).or_else(
        || side.iter().copied().filter(|k| k.record.status == Status::Provisional).max_by_key(|k| k.key),
    )
}
