//! The session buffer's use-cases (seed section 13): start, append numbered turns, end; and
//! the extraction run an ended session starts.

use std::collections::BTreeMap;
use std::sync::Arc;

use retold_domain::{
    AuditEvent, Clock, DomainError, EventId, EventKind, IdGenerator, Name, Principal, Result, Scope, Session,
    SessionId, SessionTurn, SourceRef, Timestamp, TurnBuffer, TurnRole,
};
use retold_ingest::{
    ExtractionReport, ExtractionRunner, Ingestor, TurnMemory, TurnWrite, retry_on_contention,
};
use tokio_util::task::TaskTracker;

/// How often an append is tried again when another append took its turn number meanwhile.
const MAX_APPEND_ATTEMPTS: usize = 8;

/// How sessions keep their turns (`sessions.*` in the configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionsConfig {
    /// Every appended turn also becomes a searchable episodic record (turn memory).
    pub turn_memory: bool,
    /// How much of the previous turn's end a turn record is embedded and indexed with, in
    /// characters.
    pub turn_context_chars: usize,
}

impl Default for SessionsConfig {
    /// The shipped defaults (`config/default.yaml`).
    fn default() -> Self {
        Self { turn_memory: true, turn_context_chars: 300 }
    }
}

/// A turn as the host has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnInput {
    pub role: TurnRole,
    pub content: String,
    /// Who spoke, when the host names them (a group chat); else the session's user, agent
    /// or tool.
    pub speaker: Option<Name>,
    /// When it was said (a replayed or imported turn): never in the future, never before the
    /// session's previous turn. `None` is now.
    pub at: Option<Timestamp>,
}

impl TurnInput {
    /// A turn said now by the session's own user, agent or tool.
    pub fn new(role: TurnRole, content: impl Into<String>) -> Self {
        Self { role, content: content.into(), speaker: None, at: None }
    }
}

/// A turn the buffer numbered, and what turn memory kept of it.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnAppended {
    pub turn: u32,
    /// How a memory cites it: `session:<id><turn:N>`.
    pub source_ref: SourceRef,
    pub memory: TurnMemory,
}

/// What ending a session started.
#[derive(Debug)]
pub enum SessionEnd {
    /// Extraction ran before the answer (`wait`), with its report.
    Extracted(Result<ExtractionReport>),
    /// Extraction runs in the background.
    Background,
    /// Extraction is off; `status` says why.
    ExtractionOff { status: String },
}

/// Sessions for the principal's own agent and user.
#[derive(Clone)]
pub struct SessionService {
    turns: Arc<dyn TurnBuffer>,
    ingestor: Ingestor,
    config: SessionsConfig,
    extraction: Option<ExtractionRunner>,
    extraction_status: String,
    tasks: TaskTracker,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for SessionService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionService")
            .field("extraction", &self.extraction_status)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// An audit event of the application layer (no record; the actor when an agent caused it).
pub(crate) fn app_event(
    ids: &dyn IdGenerator,
    clock: &dyn Clock,
    kind: EventKind,
    actor: Option<&Principal>,
    details: &[(&str, String)],
) -> AuditEvent {
    AuditEvent {
        id: EventId::from_body(&ids.next_body()).expect("generated ids are valid"),
        at: clock.now(),
        kind,
        record_id: None,
        actor: actor.map(|p| p.agent_id.clone()),
        details: details.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect::<BTreeMap<_, _>>(),
    }
}

impl SessionService {
    /// Sessions over `turns`, keeping turns as memory through `ingestor` as `config` says;
    /// `extraction` (when on) runs after a session ends, tracked by `tasks` so shutdown can
    /// wait for runs in flight. `extraction_status` says why it is on or off.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        turns: Arc<dyn TurnBuffer>,
        ingestor: Ingestor,
        config: SessionsConfig,
        extraction: Option<ExtractionRunner>,
        extraction_status: String,
        tasks: TaskTracker,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self { turns, ingestor, config, extraction, extraction_status, tasks, clock, ids }
    }

    /// How sessions keep their turns.
    pub fn config(&self) -> SessionsConfig {
        self.config
    }

    /// The extraction runner, when extraction is on.
    pub fn extraction(&self) -> Option<&ExtractionRunner> {
        self.extraction.as_ref()
    }

    /// `on (…)` or `off (why)`.
    pub fn extraction_status(&self) -> &str {
        &self.extraction_status
    }

    /// Background work (extraction runs) that shutdown waits for.
    pub fn tasks(&self) -> &TaskTracker {
        &self.tasks
    }

    /// A session of the principal's agent and user; any other (or a malformed id) answers
    /// exactly like a missing one.
    pub async fn own(&self, principal: &Principal, id: &str) -> Result<Session> {
        let not_found = || DomainError::NotFound { what: "session", id: id.to_owned() };
        let session_id = SessionId::new(id.to_owned()).map_err(|_| not_found())?;
        match self.turns.session(&session_id).await? {
            Some(s) if s.agent_id == principal.agent_id && s.user_id == principal.user_id => Ok(s),
            _ => Err(not_found()),
        }
    }

    /// Start a session for the principal's agent and user. Its turns are kept as memory in
    /// `scope` (which the principal must be able to write: `ScopeNotWritable` otherwise),
    /// else in the principal's private scope.
    pub async fn start(&self, principal: &Principal, scope: Option<Scope>) -> Result<Session> {
        if let Some(scope) = &scope
            && !self.ingestor.access(principal).await?.can_write(scope)
        {
            return Err(DomainError::ScopeNotWritable { scope: scope.to_string() });
        }
        let session = Session {
            id: SessionId::from_body(&self.ids.next_body()).expect("generated ids are valid"),
            agent_id: principal.agent_id.clone(),
            user_id: principal.user_id.clone(),
            project_id: principal.project_id.clone(),
            started_at: self.clock.now(),
            ended_at: None,
            scope: scope.filter(|s| *s != principal.private_scope()),
        };
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::SessionStarted,
            Some(principal),
            &[("session_id", session.id.to_string())],
        );
        self.turns.start_session(session.clone(), event).await?;
        Ok(session)
    }

    /// Append a numbered turn to one of the principal's open sessions; with turn memory on,
    /// the records kept of it commit with it, so a search finds it once this answers. A time
    /// in the future, or before the session's previous turn, is refused (`at`).
    pub async fn append(&self, principal: &Principal, id: &str, input: TurnInput) -> Result<TurnAppended> {
        let session = self.own(principal, id).await?;
        if session.ended_at.is_some() {
            return Err(DomainError::Conflict(format!("session {} has ended", session.id)));
        }
        if input.content.trim().is_empty() || input.content.contains('\0') {
            return Err(DomainError::Invalid {
                field: "content",
                reason: "must hold text other than whitespace, and no NUL character".into(),
            });
        }
        let now = self.clock.now();
        let at = input.at.unwrap_or(now);
        if at > now {
            return Err(DomainError::Invalid {
                field: "at",
                reason: format!("{} is in the future (now is {})", at.to_rfc3339(), now.to_rfc3339()),
            });
        }
        retry_on_contention(MAX_APPEND_ATTEMPTS, || self.append_once(principal, &session, &input, at, now))
            .await
    }

    async fn append_once(
        &self,
        principal: &Principal,
        session: &Session,
        input: &TurnInput,
        at: Timestamp,
        now: Timestamp,
    ) -> Result<TurnAppended> {
        let last = self.turns.last_turn(&session.id).await?;
        if let Some(last) = &last
            && at < last.at
        {
            return Err(DomainError::Invalid {
                field: "at",
                reason: format!(
                    "{} is before turn {} of this session ({}): a session's turns are in the order they were said",
                    at.to_rfc3339(),
                    last.turn,
                    last.at.to_rfc3339()
                ),
            });
        }
        let turn = SessionTurn {
            session_id: session.id.clone(),
            turn: last.as_ref().map_or(1, |t| t.turn + 1),
            role: input.role,
            speaker: input.speaker.clone(),
            content: input.content.clone(),
            at,
            created_at: now,
        };
        let source_ref = SourceRef::session_turn_ref(&session.id, turn.turn);
        let number = turn.turn;
        let memory = if self.config.turn_memory {
            // What it was said after: the previous turn's end, with its speaker's label.
            let context = last.map(|last| {
                let said = match &last.speaker {
                    Some(speaker) => format!("{speaker}: {}", last.content),
                    None => last.content,
                };
                retold_domain::text::last_chars(&said, self.config.turn_context_chars).to_owned()
            });
            let scope = session.scope.clone().unwrap_or_else(|| principal.private_scope());
            let write = TurnWrite { turn, scope, context, context_chars: self.config.turn_context_chars };
            self.ingestor.append_turn(principal, write).await?
        } else {
            self.turns.append_turn(turn).await?;
            TurnMemory::Off
        };
        Ok(TurnAppended { turn: number, source_ref, memory })
    }

    /// End one of the principal's sessions; its extraction then runs once, before the answer
    /// when `wait`, otherwise in the background.
    pub async fn end(&self, principal: &Principal, id: &str, wait: bool) -> Result<(SessionId, SessionEnd)> {
        let session = self.own(principal, id).await?;
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::SessionEnded,
            Some(principal),
            &[("session_id", session.id.to_string())],
        );
        self.turns.end_session(&session.id, self.clock.now(), self.extraction.is_some(), event).await?;
        let Some(runner) = self.extraction.clone() else {
            return Ok((session.id, SessionEnd::ExtractionOff { status: self.extraction_status.clone() }));
        };
        let id = session.id.clone();
        if wait {
            // The run is its own task: a client that hangs up or a request timeout must not
            // cancel it halfway, since the session is claimed once it starts.
            let run = self
                .tasks
                .spawn(async move { runner.run(&id).await })
                .await
                .map_err(|e| DomainError::backend("extraction task", e.to_string()))?;
            Ok((session.id, SessionEnd::Extracted(run)))
        } else {
            self.tasks.spawn(async move {
                // The runner records the outcome on the session's extraction.run or
                // extraction.failed event and logs failures; nobody waits for the report.
                let _report = runner.run(&id).await;
            });
            Ok((session.id, SessionEnd::Background))
        }
    }
}
