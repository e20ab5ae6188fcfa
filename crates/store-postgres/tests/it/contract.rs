//! The store contract (`retold_test_kit::contract`) against the PostgreSQL implementation.

retold_test_kit::contract_suite!(crate::open);
