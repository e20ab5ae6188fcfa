//! Identifier newtypes. Each constructor refuses bad input once, at the edge.

use std::fmt;
use std::sync::Arc;

use crate::error::{DomainError, Result};

/// Longest identifier accepted anywhere.
pub const MAX_ID_LEN: usize = 128;

/// Characters allowed in a free-form identifier (agent, user, project, scope ids): ASCII
/// letters and digits and `- _ . @ +`, so the OpenAPI document can state the rule as a
/// pattern every client's regex engine reads the same way. `/` and `:` are excluded: they delimit `agent:<agent>/<user>` scopes; `<` and `>`
/// delimit `session:<id><turn:N>` source references.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@' | '+')
}

pub(crate) fn check_token(field: &'static str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(DomainError::invalid(field, "must not be empty"));
    }
    if value.chars().count() > MAX_ID_LEN {
        return Err(DomainError::invalid(field, format!("longer than {MAX_ID_LEN} characters")));
    }
    if let Some(bad) = value.chars().find(|c| !is_token_char(*c)) {
        return Err(DomainError::invalid(
            field,
            format!("{value:?} contains {bad:?}; allowed are ASCII letters, digits and - _ . @ +"),
        ));
    }
    Ok(())
}

fn check_prefixed(field: &'static str, prefix: &str, value: &str) -> Result<()> {
    let Some(body) = value.strip_prefix(prefix) else {
        return Err(DomainError::invalid(field, format!("{value:?} must start with {prefix:?}")));
    };
    if body.is_empty() {
        return Err(DomainError::invalid(field, format!("{value:?} has nothing after {prefix:?}")));
    }
    if value.len() > MAX_ID_LEN {
        return Err(DomainError::invalid(field, format!("longer than {MAX_ID_LEN} characters")));
    }
    if let Some(bad) = body.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_')) {
        return Err(DomainError::invalid(
            field,
            format!("{value:?} contains {bad:?}; allowed after the prefix are ASCII letters, digits and _"),
        ));
    }
    Ok(())
}

macro_rules! token_id {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// Parse and validate.
            pub fn new(value: impl Into<String>) -> Result<Self> {
                let value = value.into();
                check_token($field, &value)?;
                Ok(Self(value))
            }

            /// The identifier as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }
    };
}

macro_rules! prefixed_id {
    ($(#[$doc:meta])* $name:ident, $field:literal, $prefix:literal) => {
        $(#[$doc])*
        /// Shared text: cloning one (the eligible set holds tens of thousands) copies a pointer.
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Arc<str>);

        impl $name {
            /// The prefix every identifier of this kind starts with.
            pub const PREFIX: &'static str = $prefix;

            /// Parse and validate.
            pub fn new(value: impl Into<String>) -> Result<Self> {
                let value = value.into();
                check_prefixed($field, $prefix, &value)?;
                Ok(Self(value.into()))
            }

            /// Build from a generated body (for id generators); the prefix is added.
            pub fn from_body(body: &str) -> Result<Self> {
                Self::new(format!("{}{}", $prefix, body))
            }

            /// The identifier as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }
    };
}

token_id!(
    /// An agent's id. Never contains `/`, so `agent:<agent>/<user>` stays unambiguous.
    AgentId,
    "agent_id"
);
token_id!(
    /// A user's id. Never contains `/`.
    UserId,
    "user_id"
);
token_id!(
    /// A project's id.
    ProjectId,
    "project_id"
);

prefixed_id!(
    /// A memory record id, `mem_<ulid>`.
    RecordId,
    "record_id",
    "mem_"
);
prefixed_id!(
    /// An entity id, `ent_<...>`.
    EntityId,
    "entity_id",
    "ent_"
);
prefixed_id!(
    /// A session id, `sess_<...>`.
    SessionId,
    "session_id",
    "sess_"
);
prefixed_id!(
    /// An audit event id, `evt_<ulid>`.
    EventId,
    "event_id",
    "evt_"
);
prefixed_id!(
    /// A grant id, `grt_<ulid>`.
    GrantId,
    "grant_id",
    "grt_"
);
prefixed_id!(
    /// A search_log row id, `srch_<ulid>`.
    SearchId,
    "search_id",
    "srch_"
);
prefixed_id!(
    /// An orchestrator decision id, `dec_<ulid>`.
    DecisionId,
    "decision_id",
    "dec_"
);
prefixed_id!(
    /// A review-queue item id, `rev_<ulid>`.
    ReviewId,
    "review_id",
    "rev_"
);
