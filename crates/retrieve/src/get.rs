//! `memory_get`: full records with their links, conflicts and supersession chain, in a
//! fixed number of batched reads (plus one per step of the longest supersession chain)
//! instead of several reads per record.

use std::collections::{HashMap, HashSet};

use retold_domain::{ConflictLink, DomainError, MemoryRecord, Principal, RecordId, Result};

use crate::request::RecordDetail;
use crate::retriever::Retriever;

impl Retriever {
    /// `memory_get` for ids the principal may read, in the order asked. An unreadable id
    /// answers exactly like a missing one; the other side of a conflict, a successor or an
    /// older version the principal cannot read is left out.
    pub async fn get(&self, principal: &Principal, ids: &[RecordId]) -> Result<Vec<RecordDetail>> {
        let access = self.access(principal).await?;
        self.details(ids, |r| access.can_read(&r.scope)).await
    }

    /// Full records for an operator (the admin key): what `get` answers for a principal who
    /// may read every scope.
    pub async fn inspect(&self, ids: &[RecordId]) -> Result<Vec<RecordDetail>> {
        self.details(ids, |_| true).await
    }

    async fn details(
        &self,
        ids: &[RecordId],
        readable: impl Fn(&MemoryRecord) -> bool,
    ) -> Result<Vec<RecordDetail>> {
        let mut known: HashMap<RecordId, MemoryRecord> = self
            .ports
            .records
            .get_many(ids)
            .await?
            .into_iter()
            .filter(|r| readable(r))
            .map(|r| (r.id.clone(), r))
            .collect();
        if let Some(missing) = ids.iter().find(|id| !known.contains_key(*id)) {
            return Err(DomainError::NotFound { what: "record", id: missing.to_string() });
        }
        let graph = &self.ports.graph;
        let conflicts = graph.conflicts_of(ids).await?;
        let successors = graph.successors(ids).await?;
        let links = graph.links_of(ids).await?;

        // Everything else the details mention, read once: conflict partners, successors, and
        // the supersession chains one step at a time.
        let wanted: HashSet<RecordId> = conflicts
            .iter()
            .flat_map(|c| [c.record_id.clone(), c.conflicting_id.clone()])
            .chain(successors.iter().map(|(newer, _)| newer.clone()))
            .chain(known.values().filter_map(|r| r.supersedes_id.clone()))
            .collect();
        self.read_chains(&mut known, wanted, &readable).await?;
        let visible = |id: &RecordId| known.contains_key(id);

        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let record = known[id].clone();
            let supersedes = supersession_chain(&known, id);
            out.push(RecordDetail {
                conflicts: conflicts
                    .iter()
                    .filter(|c| partner(c, id).is_some_and(visible))
                    .cloned()
                    .collect(),
                superseded_by: successors
                    .iter()
                    .filter(|(newer, older)| older == id && visible(newer))
                    .map(|(newer, _)| newer.clone())
                    .collect(),
                links: links.iter().filter(|l| &l.record_id == id).cloned().collect(),
                supersedes,
                record,
            });
        }
        Ok(out)
    }

    /// Read the records `wanted` names, and the supersession chains one step at a time, into
    /// `known`; what the store lacks or `readable` refuses is left out.
    async fn read_chains(
        &self,
        known: &mut HashMap<RecordId, MemoryRecord>,
        mut wanted: HashSet<RecordId>,
        readable: &impl Fn(&MemoryRecord) -> bool,
    ) -> Result<()> {
        let mut unreadable: HashSet<RecordId> = HashSet::new();
        while !wanted.is_empty() {
            let batch: Vec<RecordId> =
                wanted.drain().filter(|id| !known.contains_key(id) && !unreadable.contains(id)).collect();
            if batch.is_empty() {
                break;
            }
            let found = self.ports.records.get_many(&batch).await?;
            let found_ids: HashSet<RecordId> = found.iter().map(|r| r.id.clone()).collect();
            unreadable.extend(batch.into_iter().filter(|id| !found_ids.contains(id)));
            for record in found {
                if !readable(&record) {
                    unreadable.insert(record.id.clone());
                    continue;
                }
                if let Some(older) = &record.supersedes_id {
                    wanted.insert(older.clone());
                }
                known.insert(record.id.clone(), record);
            }
        }
        Ok(())
    }
}

/// The other record of a conflict link that names `id`.
fn partner<'a>(link: &'a ConflictLink, id: &RecordId) -> Option<&'a RecordId> {
    if &link.record_id == id {
        Some(&link.conflicting_id)
    } else if &link.conflicting_id == id {
        Some(&link.record_id)
    } else {
        None
    }
}

/// The records `id` supersedes, newest first, as far as `known` holds them (a cycle ends it).
fn supersession_chain(known: &HashMap<RecordId, MemoryRecord>, id: &RecordId) -> Vec<MemoryRecord> {
    let mut supersedes = Vec::new();
    let mut seen = HashSet::from([id.clone()]);
    let mut next = known[id].supersedes_id.clone();
    while let Some(older) = next.take() {
        if !seen.insert(older.clone()) {
            break;
        }
        match known.get(&older) {
            Some(r) => {
                next = r.supersedes_id.clone();
                supersedes.push(r.clone());
            }
            None => break,
        }
    }
    supersedes
}
