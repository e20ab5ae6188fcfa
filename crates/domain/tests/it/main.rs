//! Integration tests of the domain rules.

mod construction;
mod source_table;
