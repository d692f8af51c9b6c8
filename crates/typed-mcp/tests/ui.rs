//! Compile-time behaviour of the declaration macros: each `ui/fail` case
//! must fail with exactly the diagnostics in its `.stderr` snapshot, and
//! each `ui/pass` case must compile.
//!
//! Diagnostics change wording between compiler releases; the snapshots are
//! written by the toolchain CI uses (regenerate with `TRYBUILD=overwrite`).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
