//! Retold's policy: scope resolution (readable and writable scopes of a principal),
//! grant rules, source authority and lifecycle transitions, and evidence rules.
//!
//! Pure functions over `retold-domain` types; no I/O. (Arrives with the policy and
//! write-path issue.)
