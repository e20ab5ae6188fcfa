//! Retold's write path: `memory_write`, `memory_revise` and `memory_forget`, and the
//! extractor's candidates, written against the domain's ports only: writable-scope and
//! evidence checks, entity resolution, current-fact decisions (create, reinforce,
//! supersede, conflict, reject), embedding and the store's write unit.
//! (Arrives with the policy and write-path issue.)
