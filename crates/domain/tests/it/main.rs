//! Integration tests of the domain rules.

mod construction;
mod sentences;
mod source_table;
