//! Entities, aliases and record links (seed section 8).

use std::fmt;

use crate::error::{DomainError, Result};
use crate::ids::{EntityId, RecordId};
use crate::record::Timestamp;
use crate::scope::Scope;

/// Longest entity name or alias accepted.
pub const MAX_NAME_CHARS: usize = 200;

/// What kind of thing an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    Person,
    Project,
    Repository,
    Product,
    Organization,
    Other,
}

impl EntityKind {
    /// All kinds.
    pub const ALL: [EntityKind; 6] =
        [Self::Person, Self::Project, Self::Repository, Self::Product, Self::Organization, Self::Other];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Person => "person",
            Self::Project => "project",
            Self::Repository => "repository",
            Self::Product => "product",
            Self::Organization => "organization",
            Self::Other => "other",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value).ok_or_else(|| {
            DomainError::invalid(
                "entity_kind",
                format!("{value:?} is not one of person, project, repository, product, organization, other"),
            )
        })
    }
}

/// Whether an entity was created by a host or guessed from an unknown name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntityStatus {
    /// Created automatically for an unknown name; awaits review.
    Provisional,
    /// Created or confirmed by a host.
    Confirmed,
    /// Merged into another entity; kept so old ids still resolve.
    Merged,
}

impl EntityStatus {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provisional => "provisional",
            Self::Confirmed => "confirmed",
            Self::Merged => "merged",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "provisional" => Ok(Self::Provisional),
            "confirmed" => Ok(Self::Confirmed),
            "merged" => Ok(Self::Merged),
            other => Err(DomainError::invalid(
                "entity_status",
                format!("{other:?} is not one of provisional, confirmed, merged"),
            )),
        }
    }
}

/// An entity name or alias: trimmed, non-empty, bounded. Lookup compares the folded form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(String);

impl Name {
    /// Build; surrounding whitespace is trimmed.
    pub fn new(value: impl AsRef<str>) -> Result<Self> {
        let value = value.as_ref().trim();
        if value.is_empty() {
            return Err(DomainError::invalid("name", "must not be empty"));
        }
        if value.chars().count() > MAX_NAME_CHARS {
            return Err(DomainError::invalid("name", format!("longer than {MAX_NAME_CHARS} characters")));
        }
        if value.chars().any(char::is_control) {
            return Err(DomainError::invalid("name", "contains a control character"));
        }
        Ok(Self(value.to_owned()))
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The lookup form: lowercase, inner whitespace collapsed. Exact match on this form is
    /// the only way a name resolves to an entity.
    pub fn folded(&self) -> String {
        fold_name(&self.0)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The lookup form of any text: lowercase, whitespace runs collapsed to one space.
pub fn fold_name(value: &str) -> String {
    value.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join(" ")
}

/// A named subject: a person, project, repository, product or organisation.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    pub id: EntityId,
    pub kind: EntityKind,
    pub canonical_name: Name,
    /// The scope the entity belongs to; lookups only see entities in readable scopes.
    pub scope: Scope,
    pub status: EntityStatus,
    /// For a merged entity, the survivor.
    pub merged_into: Option<EntityId>,
    pub created_at: Timestamp,
}

impl Entity {
    /// A new, unmerged entity with a fresh id from `ids` (entity ids are lowercase).
    pub fn create(
        ids: &dyn crate::ports::IdGenerator,
        kind: EntityKind,
        canonical_name: Name,
        scope: Scope,
        status: EntityStatus,
        created_at: Timestamp,
    ) -> Self {
        Self {
            id: EntityId::from_body(&ids.next_body().to_lowercase()).expect("generated ids are valid"),
            kind,
            canonical_name,
            scope,
            status,
            merged_into: None,
            created_at,
        }
    }
}

/// How a record relates to an entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkRole {
    /// The record's main topic. In entity search it ranks before `Mentions` among records the
    /// query's words did not find; among those they found, relevance orders them.
    About,
    /// The record also refers to the entity.
    Mentions,
}

impl LinkRole {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::About => "about",
            Self::Mentions => "mentions",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "about" => Ok(Self::About),
            "mentions" => Ok(Self::Mentions),
            other => Err(DomainError::invalid("role", format!("{other:?} is not one of about, mentions"))),
        }
    }
}

/// One row of record_entities.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordEntityLink {
    pub record_id: RecordId,
    pub entity_id: EntityId,
    pub role: LinkRole,
}
