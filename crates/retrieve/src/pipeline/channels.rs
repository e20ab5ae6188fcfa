//! Stage 3: the three candidate generators over the same eligible set (seed section 11).
//! Each returns its ranked ids (1-based ranks, eligible only) and its trace candidates. The
//! dense channel (query embedding, then the scan on a blocking thread) runs concurrently
//! with the lexical and entity channels.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use retold_domain::{
    Channel, DomainError, Entity, EntityId, EntityKind, LinkRole, LinkedRecord, Name, PipelineStage,
    RecordId, RecordKey, Result, SentenceWeight, TraceCandidate, TraceNote,
};
use retold_policy::ScopeAccess;
use tracing::{Instrument, info_span};

use super::{Eligible, Timings};
use crate::config::LexicalStemming;
use crate::fusion::weighted_rrf;
use crate::query::{
    add_forms, lexical_terms, name_phrases, person, pronoun_words, without_names, words_besides,
};
use crate::request::{Channels, DenseMatch, EntityMatch, LexicalMatch};
use crate::retriever::Retriever;

/// An entity the query names, with the folded name it matched, and whether that name is the
/// one the question's pronouns point at (`retrieval.pronouns`).
struct Named {
    matched: String,
    entity: Entity,
    by_pronoun: bool,
}

/// One channel's ranked list: its ids in rank order (1-based ranks, eligible only), the
/// trace's candidates, each record's match, and each record's key.
pub(super) struct ChannelList<M> {
    pub(super) ids: Vec<RecordId>,
    pub(super) trace: Vec<TraceCandidate>,
    pub(super) matches: HashMap<RecordId, M>,
    pub(super) keys: HashMap<RecordId, RecordKey>,
}

impl<M> Default for ChannelList<M> {
    fn default() -> Self {
        Self { ids: Vec::new(), trace: Vec::new(), matches: HashMap::new(), keys: HashMap::new() }
    }
}

impl<M> ChannelList<M> {
    /// Append `id` at the next rank, with its trace line and its match (given the rank).
    pub(super) fn push(
        &mut self,
        (id, key): (RecordId, RecordKey),
        (score, detail): (f64, String),
        matched: impl FnOnce(u32) -> M,
    ) {
        let rank = self.ids.len() as u32 + 1;
        self.trace.push(TraceCandidate { record_id: id.clone(), rank, score, detail });
        self.matches.insert(id.clone(), matched(rank));
        self.keys.insert(id.clone(), key);
        self.ids.push(id);
    }

    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }
}

/// What the channels search with: the query, whom its pronouns point at, the eligible set,
/// and which channels run.
pub(super) struct ChannelQuery<'a> {
    pub(super) access: &'a ScopeAccess,
    /// The query the channels run (the rewriter's, when it rewrote).
    pub(super) query: &'a str,
    /// The name the question's pronouns point at (`retrieval.pronouns`).
    pub(super) pointed: Option<&'a Name>,
    pub(super) eligible: &'a Eligible,
    /// The eligible records inside the query's time windows (`fusion.window`), when it names one.
    pub(super) in_windows: Option<&'a Eligible>,
    pub(super) which: Channels,
}

/// The dense channel's lists: the records, the records by their best sentence (when
/// `fusion.sentences` runs that list and some record has sentence vectors), and the records
/// inside the time the query names (when `fusion.window` runs that list).
struct DenseLists {
    records: ChannelList<DenseMatch>,
    sentences: Option<ChannelList<DenseMatch>>,
    window: Option<ChannelList<DenseMatch>>,
}

/// The entity channel's links before ranking: the narrow entities' records, the broad
/// entities' links apart, and the query's words besides the entities' names.
pub(super) struct EntityLinks {
    pub(super) narrow: Vec<NarrowLink>,
    pub(super) broad: Broad,
    pub(super) besides: Vec<String>,
}

/// A query's vector, and that of the query without its pronouns when asked for in the same
/// run.
struct QueryVectors {
    written: Vec<f32>,
    without_pronouns: Option<Vec<f32>>,
}

/// What `dense_and_entity` found, each with how long it took, and the people's words taken
/// out of the dense query, with what was left.
struct DenseAndEntity {
    dense: Option<(DenseLists, Duration)>,
    entity: Option<(EntityLinks, Duration)>,
    people: Vec<String>,
    without: Option<String>,
}

/// What the channels found: one ranked list per channel that ran (dense, its sentence list,
/// its list of the query's time, lexical, entity, in that order), each record's match per
/// channel, the key of every candidate, and the trace.
#[derive(Default)]
pub(crate) struct ChannelHits {
    pub(crate) lists: Vec<Vec<RecordId>>,
    pub(crate) trace: Vec<(Channel, Vec<TraceCandidate>)>,
    pub(crate) dense: HashMap<RecordId, DenseMatch>,
    /// The dense channel's sentence list (`fusion.sentences`): each record's rank there, and
    /// its own vector's cosine (what the gate reads).
    pub(crate) sentences: HashMap<RecordId, DenseMatch>,
    /// The dense channel over the records inside the query's windows (`fusion.window`).
    pub(crate) window: HashMap<RecordId, DenseMatch>,
    pub(crate) lexical: HashMap<RecordId, LexicalMatch>,
    pub(crate) entity: HashMap<RecordId, EntityMatch>,
    /// The query's words besides the names of the entities it names (its lexical terms less
    /// those names): when there are any, an entity match alone does not pass the gate.
    pub(crate) entity_besides: Vec<String>,
    pub(crate) keys: HashMap<RecordId, RecordKey>,
    /// What a channel changed about the query it ran (the dense channel's weighed-down names).
    pub(crate) notes: Vec<TraceNote>,
}

impl ChannelHits {
    /// The lists so far fused by weighted RRF, each at its channel's weight: the fusion
    /// stage's order, and the order a broad entity takes its records in.
    pub(crate) fn fused(&self, weights: &crate::config::FusionWeights, rrf_k: u32) -> Vec<(RecordId, f64)> {
        let weighted: Vec<(f64, &[RecordId])> = self
            .trace
            .iter()
            .zip(&self.lists)
            .map(|((channel, _), list)| (weights.of(*channel), list.as_slice()))
            .collect();
        weighted_rrf(&weighted, rrf_k)
    }

    /// Whether any of the dense channel's lists (records, sentences, the query's time) holds
    /// `id`: one channel, as the gate counts it.
    pub(crate) fn in_dense_lists(&self, id: &RecordId) -> bool {
        [&self.dense, &self.sentences, &self.window].iter().any(|list| list.contains_key(id))
    }

    /// Add a channel's list (its ids, trace and keys), and return its matches.
    pub(super) fn add<M>(&mut self, channel: Channel, list: ChannelList<M>) -> HashMap<RecordId, M> {
        self.keys.extend(list.keys);
        self.lists.push(list.ids);
        self.trace.push((channel, list.trace));
        list.matches
    }
}

async fn timed<T>(run: impl std::future::Future<Output = Result<T>>) -> Result<(T, Duration)> {
    let t = Instant::now();
    let out = run.await?;
    Ok((out, t.elapsed()))
}

impl Retriever {
    /// Run the channels `q.which` turns on; nothing runs over an empty eligible set.
    pub(super) async fn channels(&self, q: &ChannelQuery<'_>, timings: &mut Timings) -> Result<ChannelHits> {
        let mut hits = ChannelHits::default();
        if q.eligible.len() == 0 {
            return Ok(hits);
        }
        let lexical = async {
            match q.which.lexical {
                true => timed(
                    self.lexical(q.query, q.eligible, self.config.per_generator_k)
                        .instrument(info_span!("retrieve.lexical")),
                )
                .await
                .map(Some),
                false => Ok(None),
            }
        };
        let (found, lexical) = tokio::join!(self.dense_and_entity(q), lexical);
        let found = found?;
        if let Some(rest) = &found.without {
            hits.notes.push(self.weighed_down(&found.people, rest));
        }
        if let Some((lists, took)) = found.dense {
            self.add_dense(&mut hits, lists);
            timings.0.push((PipelineStage::Dense, micros(took)));
        }
        if let Some((list, took)) = lexical? {
            hits.lexical = hits.add(Channel::Lexical, list);
            timings.0.push((PipelineStage::Lexical, micros(took)));
        }
        if let Some((links, took)) = found.entity {
            self.add_entity(&mut hits, links);
            timings.0.push((PipelineStage::Entity, micros(took)));
        }
        Ok(hits)
    }

    /// The note the dense channel leaves when it weighed the people's names down.
    fn weighed_down(&self, people: &[String], rest: &str) -> TraceNote {
        TraceNote {
            stage: PipelineStage::Dense,
            note: format!(
                "the people named ({}) weigh {} of the query vector: the rest is \"{rest}\"",
                people.join(", "),
                self.config.dense_name_weight
            ),
        }
    }

    /// The dense channel's lists, in order: records, sentences, the query's time.
    fn add_dense(&self, hits: &mut ChannelHits, lists: DenseLists) {
        hits.dense = hits.add(Channel::Dense, lists.records);
        match lists.sentences {
            Some(list) => hits.sentences = hits.add(Channel::Sentences, list),
            None if self.config.fusion_weights.sentences > 0.0 => hits.notes.push(TraceNote {
                stage: PipelineStage::Dense,
                note: "no record the sentence list found has sentence vectors: it is the record list \
                       again, and not fused (`retold ops reembed --refresh` gives records written \
                       before sentence vectors theirs)"
                    .to_owned(),
            }),
            None => {}
        }
        if let Some(list) = lists.window {
            hits.window = hits.add(Channel::Window, list);
        }
    }

    /// The entity channel's list, ranked by the other lists fused: what orders a narrow
    /// entity's records and what a broad entity's corroborate.
    fn add_entity(&self, hits: &mut ChannelHits, links: EntityLinks) {
        hits.entity_besides = links.besides;
        let order = hits.fused(&self.config.fusion_weights, self.config.rrf_k);
        let k = self.config.per_generator_k;
        let mut list = rank_narrow(links.narrow, &order, k);
        if self.config.entity_broad_corroborates && !links.broad.is_empty() {
            corroborate(&order, &links.broad, k, &mut list);
        }
        hits.entity = hits.add(Channel::Entity, list);
    }

    /// The dense and entity channels, beside the lexical one. The query's names resolve while
    /// the query as written is embedded; when it names or points at a person the store knows
    /// (`dense_name_weight` below 1), the query vector is `dense_name_weight` of the query as
    /// written and the rest of the query without those words. Pronouns are words of the text,
    /// so the query without its pronouns is embedded in the same run as the query (a second
    /// row costs about 0.6 of a second run) and serves when the lookup finds that those are
    /// the words to leave out; any other rest is embedded after the lookup. Then the scan and
    /// the entity channel's links run side by side.
    async fn dense_and_entity(&self, q: &ChannelQuery<'_>) -> Result<DenseAndEntity> {
        let weight = self.config.dense_name_weight;
        let blends = q.which.dense && weight < 1.0;
        let lookup = async {
            match q.which.entity || blends {
                true => timed(self.named(q.access, q.query, q.pointed)).await.map(Some),
                false => Ok(None),
            }
        };
        // Only pronouns that point somewhere (`retrieval.pronouns`) can be taken out.
        let guess = match blends && q.pointed.is_some() {
            true => pointing_words(q.query),
            false => Vec::new(),
        };
        let guessed = without_names(q.query, &guess);
        let written = async {
            match q.which.dense {
                true => timed(self.embed_with(q.query, guessed.as_deref())).await.map(Some),
                false => Ok(None),
            }
        };
        let lists = self.dense_list_weights();
        let (named, written, ()) = tokio::join!(lookup, written, self.prepare_scan(q, &lists));
        let (named, written) = (named?, written?);
        let people = match (&named, blends) {
            (Some((named, _)), true) => people_words(q.query, named),
            _ => Vec::new(),
        };
        let without = without_names(q.query, &people);
        let dense = async {
            let Some((vectors, embedded)) = written else { return Ok(None) };
            let (lists, took) = timed(async {
                let vector = vectors.written;
                let rest = match (&without, vectors.without_pronouns) {
                    (Some(_), Some(rest)) if people == guess => Some(rest),
                    (Some(rest), _) => Some(self.embed_with(rest, None).await?.written),
                    (None, _) => None,
                };
                let vector = match rest {
                    Some(rest) => blend(&vector, &rest, weight),
                    None => vector,
                };
                self.dense_lists(vector, q, &lists).await
            })
            .await?;
            Ok::<_, DomainError>(Some((lists, embedded + took)))
        };
        let entity = async {
            let (Some((named, resolved)), true) = (&named, q.which.entity) else { return Ok(None) };
            let (links, took) = timed(
                self.entity(named, q.query, q.eligible, self.config.per_generator_k)
                    .instrument(info_span!("retrieve.entity")),
            )
            .await?;
            Ok::<_, DomainError>(Some((links, *resolved + took)))
        };
        let (dense, entity) = tokio::join!(dense, entity);
        Ok(DenseAndEntity { dense: dense?, entity: entity?, people, without })
    }

    /// The sentence weight of each dense list, from one scan: the records by their own
    /// vector, and (`fusion.sentences`) the records by their best sentence. A record's best
    /// sentence counts in the sentence list only, never mixed into the record list's score:
    /// one mechanism for one idea.
    fn dense_list_weights(&self) -> Vec<SentenceWeight> {
        let mut lists = vec![SentenceWeight::NONE];
        if self.config.fusion_weights.sentences > 0.0 {
            lists.push(SentenceWeight::BEST);
        }
        lists
    }

    /// What the scan needs before the query (its rows, the means it centres on), done while
    /// the query is embedded, on another thread. Only a head start: should it not finish, the
    /// scan does the same work itself.
    async fn prepare_scan(&self, q: &ChannelQuery<'_>, lists: &[SentenceWeight]) {
        if q.which.dense {
            let index = self.ports.index.clone();
            let (keys, centring, lists) =
                (q.eligible.keys.clone(), self.config.dense_centring, lists.to_vec());
            let _ = tokio::task::spawn_blocking(move || index.prepare(&keys, centring, &lists)).await;
        }
    }

    /// The dense lists for `vector`: one per weight in `lists` over every eligible record,
    /// beside (`fusion.window`) the records inside the time the query names, by the same
    /// vector and each record's best sentence (its own vector when it has none: a day's long
    /// turns answer in one sentence).
    async fn dense_lists(
        &self,
        vector: Vec<f32>,
        q: &ChannelQuery<'_>,
        lists: &[SentenceWeight],
    ) -> Result<DenseLists> {
        let k = self.config.per_generator_k;
        let window_scan = q.in_windows.filter(|keys| keys.len() > 0).map(|keys| (keys, vector.clone()));
        let window = async {
            let Some((keys, vector)) = window_scan else { return Ok(None) };
            let mut found = self.dense(vector, keys, k, &[SentenceWeight::BEST]).await?;
            let (list, _) = found.pop().ok_or_else(|| {
                DomainError::backend("vector scan", "returned no list for the query's time")
            })?;
            Ok::<_, DomainError>(Some(list))
        };
        let (window, found) = tokio::join!(window, self.dense(vector, q.eligible, k, lists));
        let (window, mut found) = (window?, found?.into_iter());
        let (records, _) = found
            .next()
            .ok_or_else(|| DomainError::backend("vector scan", "returned no list for the records"))?;
        // A sentence list in which no record has sentence vectors (a store written before
        // them) is the record list again: it is not fused twice.
        let sentences = found.next().filter(|(_, sentenced)| *sentenced).map(|(list, _)| list);
        Ok(DenseLists { records, sentences, window })
    }

    /// The L2-normalised vector of a query text, and in the same run that of `also` (the
    /// query without its pronouns) when given.
    async fn embed_with(&self, query: &str, also: Option<&str>) -> Result<QueryVectors> {
        let texts: Vec<String> = std::iter::once(query).chain(also).map(str::to_owned).collect();
        let mut vectors = self.ports.embedder.embed(&texts).await?.into_iter();
        let missing = || DomainError::backend("embedder", "returned too few vectors for the query");
        let vector = vectors.next().ok_or_else(missing)?;
        let also = match also {
            Some(_) => Some(vectors.next().ok_or_else(missing)?),
            None => None,
        };
        Ok(QueryVectors { written: vector, without_pronouns: also })
    }

    /// Dense: the masked exact scan for the query's vector over the eligible keys, on a
    /// blocking thread (it takes milliseconds at 50k records; a runtime worker must not): one
    /// ranked list per sentence weight in `lists` (how much of each record's best sentence is
    /// in its score), from one pass over the rows, each with whether any record in it was
    /// scored with a sentence vector.
    async fn dense(
        &self,
        vector: Vec<f32>,
        eligible: &Eligible,
        k: usize,
        lists: &[SentenceWeight],
    ) -> Result<Vec<(ChannelList<DenseMatch>, bool)>> {
        let index = self.ports.index.clone();
        let (keys, centring, weights) = (eligible.keys.clone(), self.config.dense_centring, lists.to_vec());
        let found =
            tokio::task::spawn_blocking(move || index.search_lists(&vector, &keys, k, centring, &weights))
                .await
                .map_err(|e| DomainError::backend("vector scan", e.to_string()))??;
        Ok(found
            .into_iter()
            .map(|hits| {
                let sentenced = hits.iter().any(|h| h.sentence.is_some());
                (ranked_dense(hits, eligible), sentenced)
            })
            .collect())
    }

    /// Lexical: the seed's query steps, BM25 over FTS5 restricted to the eligible keys, with
    /// the inflections `lexical_stemming` allows.
    async fn lexical(&self, query: &str, eligible: &Eligible, k: usize) -> Result<ChannelList<LexicalMatch>> {
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
        let mut list = ChannelList::default();
        for hit in found.into_iter().filter(|h| eligible.contains(h.record_key)) {
            let matched: Vec<String> = hit.matched.iter().map(|m| m.term.clone()).collect();
            let detail = format!("terms {}/{}: {}", matched.len(), terms.len(), matched.join(", "));
            let (bm25, query_terms) = (hit.score, terms.len());
            list.push((hit.record_id, hit.record_key), (hit.score, detail), |rank| LexicalMatch {
                rank,
                bm25,
                matched: hit.matched,
                query_terms,
            });
        }
        Ok(list)
    }

    /// The entities the query names: one- to four-word phrases resolved exactly against names
    /// and aliases in readable scopes. `pointed`, the name a question's pronouns point at
    /// (`retrieval.pronouns`), resolves only to a person.
    async fn named(&self, access: &ScopeAccess, query: &str, pointed: Option<&Name>) -> Result<Vec<Named>> {
        let mut names: Vec<Name> = name_phrases(query).iter().filter_map(|p| Name::new(p).ok()).collect();
        names.extend(pointed.cloned());
        let pointed = pointed.map(Name::folded);
        let found = self.ports.entities.find_by_names(&access.readable, &names).await?;
        Ok(found
            .into_iter()
            .map(|(matched, entity)| Named {
                by_pronoun: pointed.as_ref() == Some(&matched),
                matched,
                entity,
            })
            .filter(|n| !n.by_pronoun || n.entity.kind == EntityKind::Person)
            .collect())
    }

    /// Entity: the linked eligible records of the entities the query names (`named`), each
    /// with its best role and how many of them link it ([`rank_narrow`] orders them), and a
    /// broad entity's links apart, and the query's words besides the entities' names. The
    /// person a question's pronouns point at only corroborates: their records rank as the
    /// other channels found them, however few there are.
    async fn entity(
        &self,
        found: &[Named],
        query: &str,
        eligible: &Eligible,
        k: usize,
    ) -> Result<EntityLinks> {
        let names: Vec<&str> = found.iter().filter(|n| !n.by_pronoun).map(|n| n.matched.as_str()).collect();
        let besides = words_besides(query, &names);
        let pronoun_named: Vec<EntityId> =
            found.iter().filter(|n| n.by_pronoun).map(|n| n.entity.id.clone()).collect();
        let mut entity_ids: Vec<EntityId> = found.iter().map(|n| n.entity.id.clone()).collect();
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
        let (narrow, broad) = split_links(linked, &broad, self.config.entity_broad_corroborates);
        Ok(EntityLinks { narrow, broad, besides })
    }
}

/// Per record of a narrow entity: its best role, how many of the query's entities link it,
/// and its key. A broad entity's links are kept aside (with `keep_broad`), for `corroborate`.
fn split_links(linked: Vec<LinkedRecord>, broad: &[EntityId], keep_broad: bool) -> (Vec<NarrowLink>, Broad) {
    let mut per_record: HashMap<RecordId, NarrowLink> = HashMap::new();
    let mut broad_links: Broad = HashMap::new();
    let (narrow, wide): (Vec<_>, Vec<_>) = linked.into_iter().partition(|l| !broad.contains(&l.entity_id));
    if keep_broad {
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
        let entry = per_record.entry(link.record_id.clone()).or_insert_with(|| NarrowLink {
            id: link.record_id.clone(),
            role: link.role,
            entities: 0,
            key: link.key,
            entity_id: link.entity_id.clone(),
        });
        entry.entities += 1;
        if link.role == LinkRole::About && entry.role != LinkRole::About {
            entry.role = LinkRole::About;
            entry.entity_id = link.entity_id;
        }
    }
    (per_record.into_values().collect(), broad_links)
}

/// A record linked to a narrow entity the query names: its best role, how many of the
/// query's entities link it, its key, and the entity of its best role.
pub(super) struct NarrowLink {
    pub(super) id: RecordId,
    pub(super) role: LinkRole,
    pub(super) entities: usize,
    pub(super) key: RecordKey,
    pub(super) entity_id: EntityId,
}

/// The entity channel's list of narrow entities' records, up to `k`, by relevance to the
/// query: first what the other channels found (the records linked to more of the query's
/// entities first, then in the order the other lists fuse in, `order`,
/// [`ChannelHits::fused`]), then what they did not (more entities first, about before
/// mentions, newest first). A role says what a record is about, not whether it answers: a
/// general fact *about* a service the question names must not outrank the failures that
/// only *mention* it and that the question's words found. And a person a conversation names
/// is narrow in a store of many conversations and linked to hundreds of their turns: the
/// query's words, not their age, pick which of them the channel lists.
pub(super) fn rank_narrow(
    narrow: Vec<NarrowLink>,
    order: &[(RecordId, f64)],
    k: usize,
) -> ChannelList<EntityMatch> {
    let position: HashMap<&RecordId, usize> =
        order.iter().enumerate().map(|(at, (id, _))| (id, at)).collect();
    let mut ranked: Vec<(Option<usize>, NarrowLink)> =
        narrow.into_iter().map(|link| (position.get(&link.id).copied(), link)).collect();
    ranked.sort_by(|(pa, a), (pb, b)| {
        pa.is_none()
            .cmp(&pb.is_none())
            .then(b.entities.cmp(&a.entities))
            .then(pa.unwrap_or(usize::MAX).cmp(&pb.unwrap_or(usize::MAX)))
            .then(a.role.cmp(&b.role))
            .then(b.key.cmp(&a.key))
    });
    ranked.truncate(k);
    let mut list = ChannelList::default();
    for (at, link) in ranked {
        let relevance = match at {
            Some(at) => format!("rank {} of the other lists fused", at + 1),
            None => "no other list found it: newest first".to_owned(),
        };
        let detail = format!("{} {} ({relevance})", link.role.as_str(), link.entity_id);
        let (entity_id, role) = (link.entity_id, link.role);
        list.push((link.id, link.key), (link.entities as f64, detail), |rank| EntityMatch {
            rank,
            entity_id,
            role,
        });
    }
    list
}

/// The words of `query` that name or point at a person the store knows, folded: the people
/// among `named`, and, when the person the pronouns point at resolved, that person's pronouns
/// (read from `query`, which a rewrite may have changed).
fn people_words(query: &str, named: &[Named]) -> Vec<String> {
    let mut words: Vec<String> = named
        .iter()
        .filter(|n| n.entity.kind == EntityKind::Person && !n.by_pronoun)
        .map(|n| n.matched.clone())
        .collect();
    if named.iter().any(|n| n.by_pronoun) {
        words.extend(pointing_words(query));
    }
    words.sort();
    words.dedup();
    words
}

/// The query's pronouns in the person it asks in (`person`), folded, sorted and deduplicated:
/// the words `people_words` takes out when that person resolves.
fn pointing_words(query: &str) -> Vec<String> {
    let Some(asked) = person(query) else { return Vec::new() };
    let mut words: Vec<String> =
        pronoun_words(query).into_iter().filter(|(_, p)| *p == asked).map(|(word, _)| word).collect();
    words.sort();
    words.dedup();
    words
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
pub(super) type Broad = HashMap<RecordId, (LinkRole, RecordKey, EntityId)>;

/// Append to the entity channel's list the broad entities' records that another channel
/// found, in the order the other channels' lists fuse in (`order`, [`ChannelHits::fused`]:
/// weighted RRF at the fusion's weights, so a record several lists rank well leads one a
/// single list ranks first), up to `k`.
pub(super) fn corroborate(
    order: &[(RecordId, f64)],
    broad: &Broad,
    k: usize,
    list: &mut ChannelList<EntityMatch>,
) {
    for (at, (id, _)) in order.iter().enumerate() {
        if list.len() >= k {
            return;
        }
        let Some((role, key, entity_id)) = broad.get(id) else { continue };
        if list.matches.contains_key(id) {
            continue;
        }
        let detail = format!(
            "{} {entity_id} (broad: corroborates rank {} of the other lists fused)",
            role.as_str(),
            at + 1
        );
        let (entity_id, role) = (entity_id.clone(), *role);
        list.push((id.clone(), *key), (0.0, detail), |rank| EntityMatch { rank, entity_id, role });
    }
}

fn micros(took: Duration) -> u64 {
    u64::try_from(took.as_micros()).unwrap_or(u64::MAX)
}

/// One dense list as the fusion takes it: its eligible hits in order, with their matches.
fn ranked_dense(found: Vec<retold_domain::VectorHit>, eligible: &Eligible) -> ChannelList<DenseMatch> {
    let mut list = ChannelList::default();
    for hit in found.into_iter().filter(|h| eligible.contains(h.record_key)) {
        let (detail, cosine) = (dense_detail(&hit), hit.score);
        list.push((hit.record_id, hit.record_key), (f64::from(hit.score), detail), |rank| DenseMatch {
            rank,
            cosine,
        });
    }
    list
}

/// What a dense candidate's trace says besides its plain cosine: its centred cosine and its
/// best sentence's, when the search used them.
fn dense_detail(hit: &retold_domain::VectorHit) -> String {
    let centred = hit.centred.map(|c| format!("centred cosine {c:.3}"));
    let sentence = hit.sentence.map(|c| format!("best sentence {c:.3}"));
    [centred, sentence].into_iter().flatten().collect::<Vec<_>>().join(", ")
}
