//! The store contract (`retold_test_kit::contract`) against the SQLite implementation on a
//! real file.

retold_test_kit::contract_suite!(crate::open);
