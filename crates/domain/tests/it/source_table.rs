//! The seed's section 6 table, row by row.

use retold_domain::{SourceKind, Status};

#[test]
fn source_table_matches_the_seed() {
    let table = [
        ("user_statement", 4, 0.95, Status::Confirmed),
        ("system", 3, 0.90, Status::Confirmed),
        ("tool_result", 2, 0.85, Status::Confirmed),
        ("session_summary", 2, 0.80, Status::Confirmed),
        ("agent_inference", 1, 0.60, Status::Provisional),
    ];
    assert_eq!(table.len(), SourceKind::ALL.len());
    for (name, rank, confidence, status) in table {
        let kind = SourceKind::parse(name).unwrap();
        assert_eq!(kind.as_str(), name);
        assert_eq!(kind.rank(), rank, "{name} rank");
        assert_eq!(kind.initial_confidence().get(), confidence, "{name} confidence");
        assert_eq!(kind.initial_status(), status, "{name} status");
    }
    assert!(SourceKind::parse("human").is_err());
}

#[test]
fn only_user_and_tool_claims_need_the_evidence_check() {
    let checked: Vec<_> = SourceKind::ALL.into_iter().filter(|k| k.requires_evidence_check()).collect();
    assert_eq!(checked, [SourceKind::UserStatement, SourceKind::ToolResult]);
}
