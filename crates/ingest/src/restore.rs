//! Restoring exported memories: records as they were (ids, statuses, history, times), with
//! their entities, links and conflicts, embedded again by the served model. An export is a
//! store's own past, so nothing is decided again: a restored superseded record stays
//! superseded, a provisional one provisional.

use std::collections::BTreeMap;

use retold_domain::{
    ConflictLink, DomainError, EligibleRecord, EmbeddingRow, Entity, EventKind, MemoryRecord, Name,
    NewEntity, RecordEntityLink, Result, WriteUnit,
};

use crate::ingestor::Ingestor;

/// Memories as an export holds them: entities (with their aliases), records (any status but
/// deleted), their entity links, and conflict links between them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemorySet {
    pub entities: Vec<(Entity, Vec<Name>)>,
    pub records: Vec<MemoryRecord>,
    pub links: Vec<RecordEntityLink>,
    pub conflicts: Vec<ConflictLink>,
}

/// What a restore did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Restored {
    pub records: usize,
    pub entities: usize,
    pub conflicts: usize,
    /// Records and entities the store held already (by id): left as they are.
    pub already_present: usize,
}

impl Ingestor {
    /// Restore `set` in one transaction: the entities and records the store does not hold yet
    /// (by id), their links and the conflicts between records it holds afterwards; each record
    /// embedded with its sentences in one model run. Restoring the same set again changes
    /// nothing. A link to an entity that is neither in the set nor stored, or a record whose
    /// `supersedes_id` is neither, fails the whole set with nothing written.
    pub async fn restore(&self, set: &MemorySet) -> Result<Restored> {
        let mut report = Restored::default();
        let ids: Vec<_> = set.records.iter().map(|r| r.id.clone()).collect();
        let stored: std::collections::HashSet<_> =
            self.ports.records.get_many(&ids).await?.into_iter().map(|r| r.id).collect();
        let records: Vec<&MemoryRecord> = set.records.iter().filter(|r| !stored.contains(&r.id)).collect();
        report.already_present += set.records.len() - records.len();
        let mut entities = Vec::new();
        for (entity, aliases) in &set.entities {
            if self.ports.entities.entity(&entity.id).await?.is_some() {
                report.already_present += 1;
            } else {
                entities.push(NewEntity {
                    entity: entity.clone(),
                    aliases: aliases.clone(),
                    name_was_unknown: false,
                });
            }
        }
        // Each entity after the one it was merged into (a chain of merges, survivors first).
        let merged_into: std::collections::HashMap<_, _> =
            entities.iter().map(|e| (e.entity.id.clone(), e.entity.merged_into.clone())).collect();
        let depth = |id: &retold_domain::EntityId| {
            let mut hops = 0usize;
            let mut at = merged_into.get(id).cloned().flatten();
            while let Some(next) = at {
                hops += 1;
                if hops > merged_into.len() {
                    break;
                }
                at = merged_into.get(&next).cloned().flatten();
            }
            hops
        };
        let depths: std::collections::HashMap<_, _> =
            entities.iter().map(|e| (e.entity.id.clone(), depth(&e.entity.id))).collect();
        entities.sort_by_key(|e| depths[&e.entity.id]);
        // Every entity a restored record or entity refers to is restored now or stored.
        let restored_entities: std::collections::HashSet<_> =
            set.entities.iter().map(|(e, _)| e.id.clone()).collect();
        let referred = set
            .links
            .iter()
            .map(|l| &l.entity_id)
            .chain(set.records.iter().filter_map(|r| r.key.as_ref().map(|k| &k.subject_entity_id)))
            .chain(set.entities.iter().filter_map(|(e, _)| e.merged_into.as_ref()));
        let mut checked = std::collections::HashSet::new();
        for id in referred {
            if !restored_entities.contains(id)
                && checked.insert(id.clone())
                && self.ports.entities.entity(id).await?.is_none()
            {
                return Err(DomainError::NotFound { what: "entity", id: id.to_string() });
            }
        }
        let restoring: std::collections::HashSet<_> = records.iter().map(|r| r.id.clone()).collect();
        for record in &records {
            if let Some(older) = &record.supersedes_id
                && !restoring.contains(older)
                && !stored.contains(older)
                && self.ports.records.get(older).await?.is_none()
            {
                return Err(DomainError::Invalid {
                    field: "supersedes_id",
                    reason: format!("{} supersedes {older}, which is neither restored nor stored", record.id),
                });
            }
        }

        // Every record's text and sentences, in two model runs.
        let mut texts = Vec::with_capacity(records.len());
        let mut sentences = Vec::with_capacity(records.len());
        for record in &records {
            let mut embedded = record.indexed().embedded_texts(self.config.sentence_vectors);
            sentences.push(embedded.split_off(1));
            texts.push(embedded.remove(0));
        }
        let vectors = if texts.is_empty() { Vec::new() } else { self.embed(texts).await? };
        let flat: Vec<String> = sentences.iter().flatten().cloned().collect();
        let mut sentence_vectors =
            if flat.is_empty() { Vec::new() } else { self.embed(flat).await? }.into_iter();
        let info = self.ports.embedder.info().clone();
        let mut unit = WriteUnit { entities, ..WriteUnit::default() };
        let mut index_rows = BTreeMap::new();
        for ((record, vector), own) in records.iter().zip(vectors).zip(&sentences) {
            self.ports.index.check(&vector)?;
            let mine: Vec<Vec<f32>> = sentence_vectors.by_ref().take(own.len()).collect();
            for s in &mine {
                self.ports.index.check(s)?;
            }
            let mine = mine.concat();
            unit.embeddings.push(EmbeddingRow {
                record_id: record.id.clone(),
                model: info.name.clone(),
                version: info.version,
                dims: info.dims,
                vector: vector.clone(),
                sentences: mine.clone(),
                sentences_pending: false,
            });
            index_rows.insert(record.id.clone(), (vector, mine));
            unit.inserts.push((*record).clone());
        }
        unit.links = set.links.iter().filter(|l| restoring.contains(&l.record_id)).cloned().collect();
        // Conflicts of a record restored now with one restored now or stored already (those
        // between stored records are the store's own already).
        let known = |id| restoring.contains(id) || stored.contains(id);
        let mut conflicts = Vec::new();
        for link in &set.conflicts {
            if !restoring.contains(&link.record_id) && !restoring.contains(&link.conflicting_id) {
                continue;
            }
            let both = [link.record_id.clone(), link.conflicting_id.clone()];
            if (known(&link.record_id) && known(&link.conflicting_id))
                || self.ports.records.get_many(&both).await?.len() == 2
            {
                conflicts.push(link.clone());
            }
        }
        report.records = unit.inserts.len();
        report.entities = unit.entities.len();
        report.conflicts = conflicts.len();
        unit.conflicts = conflicts;
        if report.records + report.entities + report.conflicts == 0 {
            return Ok(report);
        }
        let mut event = self.event_by(EventKind::OpsImport, None, None);
        event.details.insert("records".into(), report.records.to_string());
        event.details.insert("entities".into(), report.entities.to_string());
        event.details.insert("conflicts".into(), report.conflicts.to_string());
        if let (Some(first), Some(last)) = (unit.inserts.first(), unit.inserts.last()) {
            event.details.insert("first_record".into(), first.id.to_string());
            event.details.insert("last_record".into(), last.id.to_string());
        }
        unit.events.push(event);
        let keys = self.ports.writer.apply(unit).await?;
        // Committed: the index follows.
        for EligibleRecord { key, id } in keys {
            if let Some((vector, sentences)) = index_rows.get(&id) {
                self.index_committed(key, &id, vector, sentences);
            }
        }
        Ok(report)
    }
}
