//! Entities, aliases and grants. Every alias change rewrites the lexical rows of the records
//! linked to the entity in the same transaction, so lexical search never sees stale aliases.
//!
//! Across processes, entity creation and alias changes take the write turn (the change
//! number, `PostgresStore::begin_change`) like every record write: they run one at a time
//! with the write units, so a new record's lexical row is either written with the new
//! aliases or rewritten by the alias change, a writer's "this name is unknown" check sees
//! every entity committed before it, and no two of them can deadlock.

use async_trait::async_trait;
use retold_domain::{
    AgentId, AuditEvent, Entity, EntityId, EntityMerge, EntityReader, EntityWriter, Grant, GrantId,
    GrantStore, Name, Result as DomainResult, Scope,
};
use sea_orm::{ConnectionTrait, DatabaseTransaction, TransactionTrait, Value};

use crate::convert::{self, millis};
use crate::error::StoreError;
use crate::store::{
    PostgresStore, aliases_of, duplicate_or, insert_event, record_change, scope_clause, stmt,
};

const ENTITY_COLUMNS: &str =
    "id, kind, canonical_name, scope_kind, scope_id, status, merged_into, created_at";

/// Rewrite the alias text of every lexical row whose record links to `entity` (the generated
/// `doc` follows). The rows are locked in key order first, so two rewrites whose records
/// overlap take their row locks in the same order and cannot deadlock each other.
async fn rewrite_fts_for(txn: &DatabaseTransaction, entity: &EntityId) -> Result<(), StoreError> {
    txn.execute_raw(stmt(
        &format!(
            "UPDATE records_fts SET aliases = {} WHERE key IN \
             (SELECT f.key FROM records_fts f WHERE f.record_id IN \
                (SELECT record_id FROM record_entities WHERE entity_id = ?) \
              ORDER BY f.key FOR UPDATE)",
            aliases_of("records_fts.record_id")
        ),
        [entity.as_str().into()],
    ))
    .await?;
    Ok(())
}

/// Fail with `NotFound` unless `id` is a live (not merged) entity, and row-lock it until the
/// transaction ends: a concurrent merge of it waits, and a change that waited for a merge
/// re-reads the merged row and fails here.
async fn require_entity(txn: &DatabaseTransaction, id: &EntityId) -> Result<(), StoreError> {
    let found = txn
        .query_one_raw(stmt(
            "SELECT 1 AS one FROM entities WHERE id = ? AND status != 'merged' FOR UPDATE",
            [id.as_str().into()],
        ))
        .await?;
    match found {
        Some(_) => Ok(()),
        None => Err(StoreError::NotFound { what: "entity", id: id.to_string() }),
    }
}

impl PostgresStore {
    async fn create_entity_tx(
        &self,
        entity: Entity,
        aliases: Vec<Name>,
        event: AuditEvent,
    ) -> Result<(), StoreError> {
        let (txn, seq) = self.begin_change().await?;
        insert_entity(&txn, &entity, &aliases).await?;
        insert_event(&txn, &event).await?;
        record_change(&txn, seq, [], std::iter::empty()).await?;
        txn.commit().await?;
        Ok(())
    }

    async fn add_alias_tx(&self, id: &EntityId, alias: Name, event: AuditEvent) -> Result<(), StoreError> {
        let (txn, seq) = self.begin_change().await?;
        require_entity(&txn, id).await?;
        insert_alias(&txn, id, &alias).await?;
        rewrite_fts_for(&txn, id).await?;
        insert_event(&txn, &event).await?;
        record_change(&txn, seq, [], std::iter::empty()).await?;
        txn.commit().await?;
        Ok(())
    }

    async fn remove_alias_tx(
        &self,
        id: &EntityId,
        alias: &Name,
        event: AuditEvent,
    ) -> Result<(), StoreError> {
        let (txn, seq) = self.begin_change().await?;
        let removed = txn
            .execute_raw(stmt(
                "DELETE FROM entity_aliases WHERE entity_id = ? AND alias_folded = ?",
                [id.as_str().into(), alias.folded().into()],
            ))
            .await?;
        if removed.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "alias", id: format!("{id}: {alias}") });
        }
        rewrite_fts_for(&txn, id).await?;
        insert_event(&txn, &event).await?;
        record_change(&txn, seq, [], std::iter::empty()).await?;
        txn.commit().await?;
        Ok(())
    }

    async fn merge_tx(&self, merge: EntityMerge) -> Result<(), StoreError> {
        let EntityMerge { from, into, scopes, updates, conflicts, events } = merge;
        if from == into {
            return Err(StoreError::Duplicate(format!("cannot merge entity {from} into itself")));
        }
        // The merge changes records (subject keys, conflicts) and their lexical rows: it takes
        // the next change number, which also runs it alone among record writers.
        let (txn, seq) = self.begin_change().await?;
        require_entity(&txn, &from).await?;
        require_entity(&txn, &into).await?;
        let (f, i): (Value, Value) = (from.as_str().into(), into.as_str().into());
        // The merged entity's name and aliases become aliases of the survivor.
        txn.execute_raw(stmt(
            "INSERT INTO entity_aliases (entity_id, alias, alias_folded) \
             SELECT ?, canonical_name, name_folded FROM entities WHERE id = ? \
             UNION ALL SELECT ?, alias, alias_folded FROM entity_aliases WHERE entity_id = ? \
             ON CONFLICT DO NOTHING",
            [i.clone(), f.clone(), i.clone(), f.clone()],
        ))
        .await?;
        txn.execute_raw(stmt("DELETE FROM entity_aliases WHERE entity_id = ?", [f.clone()])).await?;
        // Links of the records in the merge's scopes move; a record linked to both keeps its
        // stronger role. Other records keep their links to the merged entity.
        let mut scope_values = Vec::new();
        let in_scopes = match &scopes {
            Some(scopes) => scope_clause(scopes, &mut scope_values),
            None => "true".to_owned(),
        };
        let moving = format!("SELECT id FROM records WHERE {in_scopes}");
        let mut values = vec![i.clone(), f.clone()];
        values.extend(scope_values.clone());
        txn.execute_raw(stmt(
            &format!(
                "INSERT INTO record_entities (record_id, entity_id, role) \
                 SELECT record_id, ?, role FROM record_entities WHERE entity_id = ? AND record_id IN ({moving}) \
                 ON CONFLICT (record_id, entity_id) DO UPDATE SET role = \
                   CASE WHEN excluded.role = 'about' OR record_entities.role = 'about' THEN 'about' ELSE 'mentions' END"
            ),
            values,
        ))
        .await?;
        let mut values = vec![f.clone()];
        values.extend(scope_values);
        txn.execute_raw(stmt(
            &format!("DELETE FROM record_entities WHERE entity_id = ? AND record_id IN ({moving})"),
            values,
        ))
        .await?;
        let mut changed: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
        for update in &updates {
            crate::store::apply_update(&txn, update).await?;
            changed.insert(update.record.id.as_str());
        }
        for conflict in &conflicts {
            txn.execute_raw(stmt(
                "INSERT INTO record_conflicts (record_id, conflicting_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [conflict.record_id.as_str().into(), conflict.conflicting_id.as_str().into()],
            ))
            .await?;
            // The conflict flag is part of the conflicting record's eligibility row.
            changed.insert(conflict.conflicting_id.as_str());
        }
        txn.execute_raw(stmt("UPDATE entities SET status = 'merged', merged_into = ? WHERE id = ?", [i, f]))
            .await?;
        rewrite_fts_for(&txn, &into).await?;
        for event in &events {
            insert_event(&txn, event).await?;
        }
        record_change(&txn, seq, [], changed.iter().copied()).await?;
        txn.commit().await?;
        Ok(())
    }
}

/// Insert an entity and its aliases inside a write transaction.
pub(crate) async fn insert_entity(
    txn: &DatabaseTransaction,
    entity: &Entity,
    aliases: &[Name],
) -> Result<(), StoreError> {
    txn.execute_raw(stmt(
        &format!("INSERT INTO entities ({ENTITY_COLUMNS}, name_folded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        [
            entity.id.as_str().into(),
            entity.kind.as_str().into(),
            entity.canonical_name.as_str().into(),
            entity.scope.kind().as_str().into(),
            entity.scope.id().into(),
            entity.status.as_str().into(),
            entity.merged_into.as_ref().map(|m| m.as_str().to_owned()).into(),
            millis(entity.created_at).into(),
            entity.canonical_name.folded().into(),
        ],
    ))
    .await
    .map_err(|e| duplicate_or(e, || format!("entity {} already exists", entity.id)))?;
    for alias in aliases {
        insert_alias(txn, &entity.id, alias).await?;
    }
    Ok(())
}

async fn insert_alias(txn: &DatabaseTransaction, id: &EntityId, alias: &Name) -> Result<(), StoreError> {
    txn.execute_raw(stmt(
        "INSERT INTO entity_aliases (entity_id, alias, alias_folded) VALUES (?, ?, ?) \
         ON CONFLICT (entity_id, alias_folded) DO NOTHING",
        [id.as_str().into(), alias.as_str().into(), alias.folded().into()],
    ))
    .await?;
    Ok(())
}

#[async_trait]
impl EntityWriter for PostgresStore {
    async fn create_entity(&self, entity: Entity, aliases: Vec<Name>, event: AuditEvent) -> DomainResult<()> {
        Ok(self.create_entity_tx(entity, aliases, event).await?)
    }

    async fn add_alias(&self, id: &EntityId, alias: Name, event: AuditEvent) -> DomainResult<()> {
        Ok(self.add_alias_tx(id, alias, event).await?)
    }

    async fn remove_alias(&self, id: &EntityId, alias: &Name, event: AuditEvent) -> DomainResult<()> {
        Ok(self.remove_alias_tx(id, alias, event).await?)
    }

    async fn merge(&self, merge: EntityMerge) -> DomainResult<()> {
        Ok(self.merge_tx(merge).await?)
    }
}

#[async_trait]
impl EntityReader for PostgresStore {
    async fn entity(&self, id: &EntityId) -> DomainResult<Option<Entity>> {
        let row = self
            .db
            .query_one_raw(stmt(
                &format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE id = ?"),
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(row.as_ref().map(convert::entity_from_row).transpose()?)
    }

    async fn aliases(&self, id: &EntityId) -> DomainResult<Vec<Name>> {
        let rows = self
            .db
            .query_all_raw(stmt(
                "SELECT alias FROM entity_aliases WHERE entity_id = ? ORDER BY alias",
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        rows.iter()
            .map(|row| {
                let alias: String = row.try_get("", "alias").map_err(StoreError::from)?;
                Name::new(alias).map_err(|e| crate::error::corrupt("entity_aliases", e).into())
            })
            .collect()
    }

    async fn find_by_name(&self, scopes: &[Scope], name: &Name) -> DomainResult<Vec<Entity>> {
        let folded = name.folded();
        let mut values = Vec::new();
        let scopes = scope_clause(scopes, &mut values);
        values.push(folded.clone().into());
        values.push(folded.into());
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT {ENTITY_COLUMNS} FROM entities WHERE {scopes} AND status != 'merged' AND \
                     (name_folded = ? OR id IN (SELECT entity_id FROM entity_aliases WHERE alias_folded = ?)) ORDER BY id"
                ),
                values,
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(convert::entity_from_row).collect::<Result<_, _>>()?)
    }

    async fn find_by_names(&self, scopes: &[Scope], names: &[Name]) -> DomainResult<Vec<(String, Entity)>> {
        if names.is_empty() || scopes.is_empty() {
            return Ok(Vec::new());
        }
        let folded: Vec<String> = names.iter().map(Name::folded).collect();
        let wanted = crate::store::text_array(folded.iter().map(String::as_str));
        let mut scope_values = Vec::new();
        let scopes = scope_clause(scopes, &mut scope_values);
        // The names and the scope clause appear twice: bind their values for both.
        let mut values: Vec<Value> = vec![wanted.clone()];
        values.extend(scope_values.clone());
        values.push(wanted);
        values.extend(scope_values);
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT n.value AS matched, e.id AS id, e.kind AS kind, e.canonical_name AS canonical_name, \
                            e.scope_kind AS scope_kind, e.scope_id AS scope_id, e.status AS status, \
                            e.merged_into AS merged_into, e.created_at AS created_at \
                     FROM entities e JOIN unnest(?::text[]) AS n(value) ON e.name_folded = n.value \
                     WHERE {scopes} AND e.status != 'merged' \
                     UNION \
                     SELECT n.value AS matched, e.id, e.kind, e.canonical_name, e.scope_kind, e.scope_id, e.status, \
                            e.merged_into, e.created_at \
                     FROM entity_aliases a JOIN unnest(?::text[]) AS n(value) \
                       ON a.alias_folded = n.value \
                     JOIN entities e ON e.id = a.entity_id WHERE {scopes} AND e.status != 'merged' \
                     ORDER BY matched, id"
                ),
                values,
            ))
            .await
            .map_err(StoreError::from)?;
        rows.iter()
            .map(|row| {
                let matched: String = row.try_get("", "matched").map_err(StoreError::from)?;
                Ok((matched, convert::entity_from_row(row)?))
            })
            .collect::<Result<_, StoreError>>()
            .map_err(Into::into)
    }
}

#[async_trait]
impl GrantStore for PostgresStore {
    async fn put_grant(&self, grant: Grant, event: AuditEvent) -> DomainResult<()> {
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        txn.execute_raw(stmt(
            "INSERT INTO grants (id, agent_id, scope_kind, scope_id, can_read, can_write) VALUES (?, ?, ?, ?, ?, ?)",
            [
                grant.id.as_str().into(),
                grant.agent_id.as_str().into(),
                grant.scope.kind().as_str().into(),
                grant.scope.id().into(),
                i64::from(grant.can_read).into(),
                i64::from(grant.can_write).into(),
            ],
        ))
        .await
        .map_err(StoreError::from)?;
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn revoke_grant(&self, id: &GrantId, event: AuditEvent) -> DomainResult<()> {
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        // One conditional UPDATE: of concurrent revocations one finds the grant live.
        let result = txn
            .execute_raw(stmt(
                "UPDATE grants SET revoked = 1 WHERE id = ? AND revoked = 0",
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "grant", id: id.to_string() }.into());
        }
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn grants_for(&self, agent: &AgentId) -> DomainResult<Vec<Grant>> {
        let rows = self
            .db
            .query_all_raw(stmt(
                "SELECT id, agent_id, scope_kind, scope_id, can_read, can_write FROM grants \
                 WHERE agent_id = ? AND revoked = 0 ORDER BY id",
                [agent.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(convert::grant_from_row).collect::<Result<_, _>>()?)
    }
}
