//! Integration tests of the http crate.

mod settings;
