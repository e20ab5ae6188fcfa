//! What Retold's test suites share: deterministic clock and ids, a scope-logging store spy,
//! the provisioned embedder, and `World`, a write path and search pipeline on real
//! components (a SQLite file, the ONNX model, the exact index). Dev-only: the service crates
//! take it as a dev-dependency and the evaluation harness for replays; nothing in the
//! service's normal dependency tree does (checked by the tidy test).

pub mod contract;
mod doubles;
pub mod postgres;
mod spy;
mod world;

pub use crate::doubles::{ManualClock, SequentialIds};
pub use crate::spy::Spy;
pub use crate::world::{World, WorldBuilder, embedder, host_event, principal};

/// Every store port trait, for tests that call the store directly, and `Backend`: all of them
/// at once, so a contract test written over `&dyn Backend` runs against any implementation.
pub mod prelude {
    pub use retold_domain::{
        ApiKeyStore, AuditLog, CurrentFacts, EligibilityIndex, EligibilitySource, EmbeddingSource,
        EntityReader, EntityWriter, ExtractionClaims, GrantStore, IdempotencyKeys, LexicalIndex, RecordGraph,
        RecordReader, RecordWriter, SearchLogStore, TurnBuffer, VectorIndex, WriteReceipts,
    };

    /// Every store port one backend implements (the application layer's `AllPorts`).
    pub use retold_app::AllPorts as Backend;
}

/// Run the whole store contract against one implementation: `$open` is an async function
/// returning something that derefs to a fixture with `backend() -> Arc<dyn Backend>` (and keeps
/// whatever the store needs alive, such as its directory).
#[macro_export]
macro_rules! contract_suite {
    ($open:path) => {
        $crate::contract_suite!(@each $open; every_field_round_trips, a_failing_statement_leaves_nothing_behind, supersession_flips_the_old_record_and_links_the_new_one_atomically, conflicts_are_linked_both_ways, alias_changes_rewrite_fts_rows, merging_entities_moves_links_and_aliases, entity_lookup_is_exact_and_scope_aware, the_eligible_filter_excludes_everything_it_must, user_text_is_never_fts_syntax, a_terms_forms_count_as_the_term_and_indexed_words_are_listed_by_prefix, grants_are_stored_listed_and_revoked, only_compatible_embeddings_are_loaded, embeddings_round_trip_bit_for_bit_across_many_rows, sessions_number_turns_and_refuse_writes_after_the_end, a_turn_and_the_records_kept_of_it_commit_together_or_not_at_all, an_ended_session_is_claimed_for_extraction_once_with_a_lease_and_bounded_retries, a_write_receipt_commits_with_its_unit_and_only_once, an_idempotency_key_is_claimed_once_answered_released_and_expires, staged_embeddings_sit_beside_the_served_ones_until_one_complete_switch, sentence_vectors_are_attached_once_after_the_write_and_left_waiting_until_then, records_are_browsed_by_scope_status_and_words_newest_first, search_traces_before_the_cut_off_are_purged_and_the_rest_stay, a_tombstone_keeps_no_vector_or_fts_row_from_its_own_commit);
    };
    (@each $open:path; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                let fixture = $open().await;
                $crate::contract::$name(fixture.backend()).await;
            }
        )*
    };
}
