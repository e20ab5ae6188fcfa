//! Turn memory: a session turn appended together with the episodic records kept verbatim
//! from it, in one write unit, so a turn is searchable the moment its append is answered.

use std::collections::BTreeMap;

use retold_domain::{
    Content, Context, EligibleRecord, EmbeddingRow, EntityKind, EventKind, IndexedText, MemoryRecord,
    MemoryType, Name, Origin, Principal, RecordEntityLink, RecordId, Result, Scope, SessionTurn, SourceRef,
    TurnRole, WriteUnit,
};

use crate::ingestor::{Ingestor, Resolution};
use crate::request::{EntityRef, RejectCode, WriteRequest};

/// A numbered turn to append and where turn memory keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnWrite {
    /// The turn, numbered as the next of its session.
    pub turn: SessionTurn,
    /// The scope its records go to (the session's).
    pub scope: Scope,
    /// What it was said after: the end of the session's previous turn.
    pub context: Option<String>,
    /// How much of a part's end the next part of a long turn gets as its context, in
    /// characters.
    pub context_chars: usize,
}

/// What turn memory kept of an appended turn.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnMemory {
    /// The records holding the turn (one, or several parts of a long one), in order.
    Kept(Vec<RecordId>),
    /// Turn memory is off: the turn is in the transcript only.
    Off,
    /// The session's scope is no longer writable by its principal (a grant was revoked): the
    /// turn is in the transcript only.
    Refused(RejectCode),
}

impl TurnMemory {
    /// The stable name: `kept`, `off` or the refusal's code.
    pub fn status(&self) -> &'static str {
        match self {
            Self::Kept(_) => "kept",
            Self::Off => "off",
            Self::Refused(code) => code.code(),
        }
    }

    /// The records kept.
    pub fn records(&self) -> &[RecordId] {
        match self {
            Self::Kept(ids) => ids,
            Self::Off | Self::Refused(_) => &[],
        }
    }
}

/// The name a turn's speaker is known by: the one the host gave, else the session's user for
/// a user turn and its agent for the agent's own; a tool without a name has none.
fn speaker_name(principal: &Principal, turn: &SessionTurn) -> Result<Option<Name>> {
    if let Some(speaker) = &turn.speaker {
        return Ok(Some(speaker.clone()));
    }
    match turn.role {
        TurnRole::User => Name::new(principal.user_id.as_str()).map(Some),
        TurnRole::Assistant => Name::new(principal.agent_id.as_str()).map(Some),
        TurnRole::Tool => Ok(None),
    }
}

impl Ingestor {
    /// Append `write.turn` (the store checks its number and that the session is open) with
    /// the records turn memory keeps of it, in one write unit: each part of its content (one
    /// for a turn within the record limit, [`retold_domain::turn_parts`]) becomes an
    /// episodic record in `write.scope`, about its speaker, citing the turn, dated when it was
    /// said, with its context, embedded and indexed before this answers. One attempt: a
    /// contended unit (a turn number taken meanwhile) is the caller's to retry after reading
    /// the last turn again.
    pub async fn append_turn(&self, principal: &Principal, write: TurnWrite) -> Result<TurnMemory> {
        let TurnWrite { turn, scope, context, context_chars } = write;
        let now = self.ports.clock.now();
        let access = self.access(principal).await?;
        if !access.can_write(&scope) {
            let reason = format!("{scope} is not among the writable scopes of agent {}", principal.agent_id);
            let mut event = self.event(EventKind::WriteRejected, None, principal);
            event.details.insert("code".into(), RejectCode::ScopeNotWritable.code().into());
            event.details.insert("reason".into(), reason);
            event.details.insert(
                "source_ref".into(),
                SourceRef::session_turn_ref(&turn.session_id, turn.turn).to_string(),
            );
            self.ports
                .writer
                .apply(WriteUnit { turn: Some(turn), events: vec![event], ..WriteUnit::default() })
                .await?;
            return Ok(TurnMemory::Refused(RejectCode::ScopeNotWritable));
        }
        let source_ref = SourceRef::session_turn_ref(&turn.session_id, turn.turn);
        let subject =
            speaker_name(principal, &turn)?.map(|name| EntityRef::Name { name, kind: EntityKind::Person });
        let parts = retold_domain::turn_parts(&turn.content, retold_domain::MAX_CONTENT_CHARS);
        let mut requests = Vec::with_capacity(parts.len());
        let mut previous: Option<String> = context;
        for part in &parts {
            let request = WriteRequest {
                memory_type: MemoryType::Episodic,
                content: Content::new(part.clone())?,
                scope: scope.clone(),
                subject: subject.clone(),
                attribute: None,
                mentions: vec![],
                source_kind: turn.role.source_kind(),
                source_ref: Some(source_ref.clone()),
                evidence: None,
                event_at: Some(turn.at),
                expires_at: None,
                confidence: None,
                tags: vec![],
                context: previous
                    .as_deref()
                    .filter(|c| !c.trim().is_empty())
                    .map(Context::new)
                    .transpose()?,
            };
            previous = Some(retold_domain::text::last_chars(part, context_chars).to_owned());
            requests.push(request);
        }
        // The speaker resolves once for every part. An ambiguous name is not guessed: the
        // records keep the speaker's label, without an entity link.
        let (new_entities, links, ambiguous) = match requests.first() {
            Some(first) => match self.resolve_entities(&access, first).await? {
                Resolution::Done(resolved) => (resolved.new_entities, resolved.links, None),
                Resolution::Ambiguous(code) => (Vec::new(), Vec::new(), Some(code)),
            },
            None => (Vec::new(), Vec::new(), None),
        };
        let mut texts = Vec::with_capacity(requests.len());
        let mut sentence_texts = Vec::with_capacity(requests.len());
        for request in &requests {
            let indexed = IndexedText {
                origin: Origin::Turn,
                speaker: turn.speaker.as_ref().map(Name::as_str),
                content: request.content.as_str(),
                context: request.context.as_ref().map(Context::as_str),
            };
            texts.push(indexed.embedding_text());
            sentence_texts.push(indexed.sentence_texts(self.config.sentence_vectors));
        }
        // Each part's own vector now, in one call; their sentence vectors after the commit.
        let mut vectors = self.embed(texts).await?.into_iter();
        let info = self.ports.embedder.info();
        let mut unit = WriteUnit { turn: Some(turn.clone()), entities: new_entities, ..WriteUnit::default() };
        let mut indexed = Vec::with_capacity(requests.len());
        for (i, (request, sentences)) in requests.iter().zip(&sentence_texts).enumerate() {
            let vector = vectors.next().expect("one vector per text");
            self.ports.index.check(&vector)?;
            let record: MemoryRecord = MemoryRecord {
                origin: Origin::Turn,
                speaker: turn.speaker.clone(),
                ..self.draft(principal, request, request.source_kind, now)
            };
            let mut event = self.event(EventKind::RecordCreated, Some(&record.id), principal);
            event.details = BTreeMap::from([
                ("source_kind".to_owned(), record.source_kind.as_str().to_owned()),
                ("origin".to_owned(), Origin::Turn.as_str().to_owned()),
                // The record is the cited turn's own text: its evidence is the turn itself.
                ("evidence_check".to_owned(), "the cited turn itself".to_owned()),
            ]);
            if parts.len() > 1 {
                event.details.insert("part".into(), format!("{} of {}", i + 1, parts.len()));
            }
            if let Some(RejectCode::EntityAmbiguous { name, candidates }) = &ambiguous {
                event.details.insert(
                    "speaker_ambiguous".into(),
                    format!("{name:?} matches {} entities", candidates.len()),
                );
            }
            for (entity, role) in &links {
                unit.links.push(RecordEntityLink {
                    record_id: record.id.clone(),
                    entity_id: entity.clone(),
                    role: *role,
                });
            }
            unit.embeddings.push(EmbeddingRow {
                record_id: record.id.clone(),
                model: info.name.clone(),
                version: info.version,
                dims: info.dims,
                vector: vector.clone(),
                sentences: Vec::new(),
                sentences_pending: !sentences.is_empty(),
            });
            indexed.push((record.id.clone(), vector, sentences.clone()));
            unit.events.push(event);
            unit.inserts.push(record);
        }
        let keys = self.ports.writer.apply(unit).await?;
        // Committed: nothing below may turn the answer into an error.
        let mut jobs = Vec::with_capacity(keys.len());
        for (EligibleRecord { key, id }, (_, vector, sentences)) in keys.iter().zip(&indexed) {
            self.index_committed(*key, id, vector, &[]);
            jobs.push(crate::sentences::SentenceJob::new(*key, id.clone(), sentences.clone()));
        }
        self.attach_later(jobs);
        Ok(TurnMemory::Kept(indexed.into_iter().map(|(id, _, _)| id).collect()))
    }
}
