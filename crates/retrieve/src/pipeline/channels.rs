//! Stage 3: the three candidate generators over the same eligible set (seed section 11).
//! Each returns its ranked ids (1-based ranks, eligible only) and its trace candidates. The
//! dense channel (query embedding, then the scan on a blocking thread) runs concurrently
//! with the lexical and entity channels.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use retold_domain::{
    Channel, Entity, EntityId, EntityKind, LinkRole, Name, PipelineStage, RecordId, RecordKey, Result,
    TraceCandidate, TraceNote,
};
use retold_policy::ScopeAccess;
use tracing::{Instrument, info_span};

use super::{Eligible, Timings};
use crate::config::LexicalStemming;
use crate::query::{add_forms, lexical_terms, name_phrases, person, pronoun_words, without_names};
use crate::request::{Channels, DenseMatch, EntityMatch, LexicalMatch};
use crate::retriever::Retriever;

/// One channel's ranked list, trace and matches.
type Ranked<M> = (Vec<RecordId>, Vec<TraceCandidate>, HashMap<RecordId, M>);

/// What the channels found: one ranked list per channel that ran (dense, lexical, entity, in
/// that order), each record's match per channel, the key of every candidate, and the trace.
#[derive(Default)]
pub(crate) struct ChannelHits {
    pub(crate) lists: Vec<Vec<RecordId>>,
    pub(crate) trace: Vec<(Channel, Vec<TraceCandidate>)>,
    pub(crate) dense: HashMap<RecordId, DenseMatch>,
    pub(crate) lexical: HashMap<RecordId, LexicalMatch>,
    pub(crate) entity: HashMap<RecordId, EntityMatch>,
    pub(crate) keys: HashMap<RecordId, RecordKey>,
    /// What a channel changed about the query it ran (the dense channel's weighed-down names).
    pub(crate) notes: Vec<TraceNote>,
}

impl ChannelHits {
    fn push(&mut self, channel: Channel, list: Vec<RecordId>, trace: Vec<TraceCandidate>) {
        self.lists.push(list);
        self.trace.push((channel, trace));
    }
}

async fn timed<T>(run: impl std::future::Future<Output = Result<T>>) -> Result<(T, Duration)> {
    let t = Instant::now();
    let out = run.await?;
    Ok((out, t.elapsed()))
}

impl Retriever {
    /// Run the channels `which` turns on; nothing runs over an empty eligible set.
    pub(super) async fn channels(
        &self,
        access: &ScopeAccess,
        query: &str,
        pointed: Option<&Name>,
        eligible: &Eligible,
        which: Channels,
        timings: &mut Timings,
    ) -> Result<ChannelHits> {
        let mut hits = ChannelHits::default();
        if eligible.len() == 0 {
            return Ok(hits);
        }
        let k = self.config.per_generator_k;
        // The names resolve once, before the channels: the entity channel lists their records,
        // and the dense channel weighs the people among them down, and the pronouns that
        // point at the asker or the agent (`pointed`).
        let weigh_names = which.dense && self.config.dense_name_weight < 1.0;
        let named = match which.entity || weigh_names {
            true => self.named(access, query, pointed).await?,
            false => Vec::new(),
        };
        let without = match weigh_names {
            true => {
                let folded = pointed.map(Name::folded);
                let mut people: Vec<String> = named
                    .iter()
                    .filter(|(matched, e)| e.kind == EntityKind::Person && folded.as_ref() != Some(matched))
                    .map(|(matched, _)| matched.clone())
                    .collect();
                // When the person the pronouns point at is one the store knows, those pronouns
                // too (read again: a rewrite may have replaced them).
                let resolved = named.iter().any(|(matched, _)| folded.as_ref() == Some(matched));
                if let (true, Some(asked)) = (resolved, person(query)) {
                    let pronouns = pronoun_words(query).into_iter().filter(|(_, p)| *p == asked);
                    people.extend(pronouns.map(|(word, _)| word));
                }
                people.sort();
                people.dedup();
                without_names(query, &people).inspect(|rest| {
                    hits.notes.push(TraceNote {
                        stage: PipelineStage::Dense,
                        note: format!(
                            "the people named ({}) weigh {} of the query vector: the rest is \"{rest}\"",
                            people.join(", "),
                            self.config.dense_name_weight
                        ),
                    })
                })
            }
            false => None,
        };
        let dense = async {
            match which.dense {
                true => timed(self.dense(query, without.as_deref(), eligible, k)).await.map(Some),
                false => Ok(None),
            }
        };
        let others = async {
            let lexical = match which.lexical {
                true => Some(
                    timed(self.lexical(query, eligible, k).instrument(info_span!("retrieve.lexical")))
                        .await?,
                ),
                false => None,
            };
            let entity = match which.entity {
                true => Some(
                    timed(
                        self.entity(&named, pointed, eligible, k).instrument(info_span!("retrieve.entity")),
                    )
                    .await?,
                ),
                false => None,
            };
            Ok::<_, retold_domain::DomainError>((lexical, entity))
        };
        let (dense, others) = tokio::join!(dense, others);
        let (lexical, entity) = others?;
        if let Some((((list, trace, matches), keys), took)) = dense? {
            hits.dense = matches;
            hits.keys.extend(keys);
            hits.push(Channel::Dense, list, trace);
            timings.0.push((PipelineStage::Dense, micros(took)));
        }
        if let Some((((list, trace, matches), keys), took)) = lexical {
            hits.lexical = matches;
            hits.keys.extend(keys);
            hits.push(Channel::Lexical, list, trace);
            timings.0.push((PipelineStage::Lexical, micros(took)));
        }
        if let Some(((((mut list, mut trace, mut matches), keys), broad), took)) = entity {
            if self.config.entity_broad_corroborates && !broad.is_empty() {
                corroborate(&hits.lists, &broad, k, &mut list, &mut trace, &mut matches);
            }
            hits.entity = matches;
            hits.keys.extend(keys);
            hits.push(Channel::Entity, list, trace);
            timings.0.push((PipelineStage::Entity, micros(took)));
        }
        Ok(hits)
    }

    /// Dense: embed the query, then the masked exact scan over the eligible keys on a
    /// blocking thread (it takes milliseconds at 50k records; a runtime worker must not).
    /// With `without` (the query less the people it names), the query vector is
    /// `dense_name_weight` of the query as written and the rest `without`, embedded in one
    /// batch (a text's vector does not depend on its batch).
    async fn dense(
        &self,
        query: &str,
        without: Option<&str>,
        eligible: &Eligible,
        k: usize,
    ) -> Result<(Ranked<DenseMatch>, HashMap<RecordId, RecordKey>)> {
        let texts: Vec<String> = std::iter::once(query).chain(without).map(str::to_owned).collect();
        let vectors = self.ports.embedder.embed(&texts).await?;
        let vector = match &vectors[..] {
            [written] => written.clone(),
            [written, rest] => blend(written, rest, self.config.dense_name_weight),
            _ => {
                return Err(retold_domain::DomainError::backend(
                    "embedder",
                    format!("returned {} vectors for {} query texts", vectors.len(), texts.len()),
                ));
            }
        };
        let index = self.ports.index.clone();
        let (keys, centring) = (eligible.keys.clone(), self.config.dense_centring);
        let found = tokio::task::spawn_blocking(move || index.search(&vector, &keys, k, centring))
            .await
            .map_err(|e| retold_domain::DomainError::backend("vector scan", e.to_string()))??;
        let (mut list, mut trace, mut matches, mut key_of) =
            (Vec::new(), Vec::new(), HashMap::new(), HashMap::new());
        for hit in found.into_iter().filter(|h| eligible.contains(h.record_key)) {
            let rank = list.len() as u32 + 1;
            trace.push(TraceCandidate {
                record_id: hit.record_id.clone(),
                rank,
                score: f64::from(hit.score),
                detail: hit.centred.map(|c| format!("centred cosine {c:.3}")).unwrap_or_default(),
            });
            matches.insert(hit.record_id.clone(), DenseMatch { rank, cosine: hit.score });
            key_of.insert(hit.record_id.clone(), hit.record_key);
            list.push(hit.record_id);
        }
        Ok(((list, trace, matches), key_of))
    }

    /// Lexical: the seed's query steps, BM25 over FTS5 restricted to the eligible keys, with
    /// the inflections `lexical_stemming` allows.
    async fn lexical(
        &self,
        query: &str,
        eligible: &Eligible,
        k: usize,
    ) -> Result<(Ranked<LexicalMatch>, HashMap<RecordId, RecordKey>)> {
        let (lexical, stemmer) = (self.ports.lexical.as_ref(), self.ports.stemmer.as_ref());
        let mut terms = lexical_terms(query);
        if self.config.lexical_stemming == LexicalStemming::All {
            add_forms(lexical, stemmer, &mut terms, |_| true).await?;
        }
        let mut found = lexical.search(&terms, &eligible.keys, k).await?;
        // A word the exact hits do not hold is looked for by its inflections. What the hits
        // hold is read from eligible hits only, so other scopes' words change nothing here.
        if self.config.lexical_stemming == LexicalStemming::Unmatched {
            let held: HashSet<String> = found
                .iter()
                .filter(|h| eligible.contains(h.record_key))
                .flat_map(|h| h.matched.iter().map(|m| m.term.clone()))
                .collect();
            if add_forms(lexical, stemmer, &mut terms, |t| !held.contains(&t.text)).await? {
                found = lexical.search(&terms, &eligible.keys, k).await?;
            }
        }
        let (mut list, mut trace, mut matches, mut key_of) =
            (Vec::new(), Vec::new(), HashMap::new(), HashMap::new());
        for hit in found.into_iter().filter(|h| eligible.contains(h.record_key)) {
            let rank = list.len() as u32 + 1;
            let matched: Vec<String> = hit.matched.iter().map(|m| m.term.clone()).collect();
            trace.push(TraceCandidate {
                record_id: hit.record_id.clone(),
                rank,
                score: hit.score,
                detail: format!("terms {}/{}: {}", matched.len(), terms.len(), matched.join(", ")),
            });
            matches.insert(
                hit.record_id.clone(),
                LexicalMatch { rank, bm25: hit.score, matched: hit.matched, query_terms: terms.len() },
            );
            key_of.insert(hit.record_id.clone(), hit.record_key);
            list.push(hit.record_id);
        }
        Ok(((list, trace, matches), key_of))
    }

    /// The entities the query names: one- to four-word phrases resolved exactly against names
    /// and aliases in readable scopes, each with the folded name it matched. `pointed`, the
    /// name a question's pronouns point at (`retrieval.pronouns`), resolves only to a person.
    async fn named(
        &self,
        access: &ScopeAccess,
        query: &str,
        pointed: Option<&Name>,
    ) -> Result<Vec<(String, Entity)>> {
        let mut names: Vec<Name> = name_phrases(query).iter().filter_map(|p| Name::new(p).ok()).collect();
        names.extend(pointed.cloned());
        let pointed = pointed.map(Name::folded);
        let mut found = self.ports.entities.find_by_names(&access.readable, &names).await?;
        found.retain(|(matched, e)| pointed.as_ref() != Some(matched) || e.kind == EntityKind::Person);
        Ok(found)
    }

    /// Entity: the linked eligible records of the entities the query names (`named`): about
    /// before mentions, then more matched entities, then newer records. The person a
    /// question's pronouns point at (`pointed`) only corroborates: their records rank as the
    /// other channels found them, however few there are.
    async fn entity(
        &self,
        found: &[(String, Entity)],
        pointed: Option<&Name>,
        eligible: &Eligible,
        k: usize,
    ) -> Result<((Ranked<EntityMatch>, HashMap<RecordId, RecordKey>), Broad)> {
        let pointed = pointed.map(Name::folded);
        let by_pronoun = |matched: &String| pointed.as_ref() == Some(matched);
        let pronoun_named: Vec<EntityId> =
            found.iter().filter(|(matched, _)| by_pronoun(matched)).map(|(_, e)| e.id.clone()).collect();
        let mut entity_ids: Vec<EntityId> = found.iter().map(|(_, e)| e.id.clone()).collect();
        entity_ids.sort();
        entity_ids.dedup();
        let linked = self.ports.graph.linked_records(&entity_ids).await?;
        let linked: Vec<_> = linked.into_iter().filter(|l| eligible.contains(l.key)).collect();
        // An entity linked to much of what the principal can see does not discriminate (a
        // conversation's speaker is linked to half of its turns); one whose records fit in
        // this channel's candidate list always counts.
        let cap = ((self.config.entity_max_share * eligible.len() as f64).floor() as usize).max(k);
        let mut per_entity: HashMap<&EntityId, usize> = HashMap::new();
        for link in &linked {
            *per_entity.entry(&link.entity_id).or_default() += 1;
        }
        let mut broad: Vec<EntityId> = if self.config.entity_max_share >= 1.0 {
            Vec::new()
        } else {
            per_entity.into_iter().filter(|(_, n)| *n > cap).map(|(e, _)| e.clone()).collect()
        };
        // The person a pronoun names is the asker or the agent: every turn of theirs is about
        // them, so, like a broad entity, they only corroborate (never list their newest).
        for e in pronoun_named {
            if !broad.contains(&e) {
                broad.push(e);
            }
        }
        // Per record: its best role, how many query entities link it, and its key. A broad
        // entity's links are kept aside, for `corroborate`.
        let mut per_record: HashMap<RecordId, (LinkRole, usize, RecordKey, EntityId)> = HashMap::new();
        let mut broad_links: Broad = HashMap::new();
        let (narrow, wide): (Vec<_>, Vec<_>) =
            linked.into_iter().partition(|l| !broad.contains(&l.entity_id));
        if self.config.entity_broad_corroborates {
            for link in wide {
                let entry = broad_links.entry(link.record_id.clone()).or_insert((
                    link.role,
                    link.key,
                    link.entity_id.clone(),
                ));
                if link.role == LinkRole::About && entry.0 != LinkRole::About {
                    *entry = (link.role, link.key, link.entity_id);
                }
            }
        }
        for link in narrow {
            let entry = per_record.entry(link.record_id.clone()).or_insert((
                link.role,
                0,
                link.key,
                link.entity_id.clone(),
            ));
            entry.1 += 1;
            if link.role == LinkRole::About && entry.0 != LinkRole::About {
                entry.0 = LinkRole::About;
                entry.3 = link.entity_id;
            }
        }
        let mut ranked: Vec<(RecordId, (LinkRole, usize, RecordKey, EntityId))> =
            per_record.into_iter().collect();
        ranked.sort_by(|a, b| a.1.0.cmp(&b.1.0).then(b.1.1.cmp(&a.1.1)).then(b.1.2.cmp(&a.1.2)));
        ranked.truncate(k);
        let (mut list, mut trace, mut matches, mut key_of) =
            (Vec::new(), Vec::new(), HashMap::new(), HashMap::new());
        for (i, (id, (role, count, key, entity_id))) in ranked.into_iter().enumerate() {
            let rank = i as u32 + 1;
            trace.push(TraceCandidate {
                record_id: id.clone(),
                rank,
                score: count as f64,
                detail: format!("{} {entity_id}", role.as_str()),
            });
            matches.insert(id.clone(), EntityMatch { rank, entity_id, role });
            key_of.insert(id.clone(), key);
            list.push(id);
        }
        Ok((((list, trace, matches), key_of), broad_links))
    }
}

/// `weight` of `written` and the rest of `rest`, normalised.
fn blend(written: &[f32], rest: &[f32], weight: f32) -> Vec<f32> {
    let mut out: Vec<f32> = written.iter().zip(rest).map(|(w, r)| weight * w + (1.0 - weight) * r).collect();
    let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        out.iter_mut().for_each(|x| *x /= norm);
    }
    out
}

/// A broad entity's links: record -> (best role, key, entity).
type Broad = HashMap<RecordId, (LinkRole, RecordKey, EntityId)>;

/// Append to the entity channel's list the broad entities' records that another channel
/// found, in the order of their best rank there (dense and lexical interleaved), up to `k`.
fn corroborate(
    others: &[Vec<RecordId>],
    broad: &Broad,
    k: usize,
    list: &mut Vec<RecordId>,
    trace: &mut Vec<TraceCandidate>,
    matches: &mut HashMap<RecordId, EntityMatch>,
) {
    let deepest = others.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..deepest {
        for found in others {
            if list.len() >= k {
                return;
            }
            let Some(id) = found.get(i) else { continue };
            let Some((role, _, entity_id)) = broad.get(id) else { continue };
            if matches.contains_key(id) {
                continue;
            }
            let rank = list.len() as u32 + 1;
            trace.push(TraceCandidate {
                record_id: id.clone(),
                rank,
                score: 0.0,
                detail: format!("{} {entity_id} (broad: corroborates rank {})", role.as_str(), i + 1),
            });
            matches.insert(id.clone(), EntityMatch { rank, entity_id: entity_id.clone(), role: *role });
            list.push(id.clone());
        }
    }
}

fn micros(took: Duration) -> u64 {
    u64::try_from(took.as_micros()).unwrap_or(u64::MAX)
}
