//! Compile-time behaviour of the declaration macros: each `ui/fail` case
//! must fail with exactly the diagnostics in its `.stderr` snapshot, and
//! each `ui/pass` case must compile.
//!
//! The failing cases are grouped by family, one diagnostic per file:
//! `attr/` (the attribute's arguments, names and URI templates), `docs/`
//! (the doc comment and its `# Arguments` list), `signature/` (what the
//! attribute is on, receivers and parameters), `types/` (types without the
//! JSON or string form they need), `lists/` (`tools![]` and its kin) and
//! `call/` (the typed call `#[tool]` generates).
//!
//! Diagnostics change wording between compiler releases, so the toolchain is
//! pinned (`rust-toolchain.toml`); regenerate the snapshots with
//! `TRYBUILD=overwrite cargo test -p typed-mcp --test ui` after changing it.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    for family in ["attr", "docs", "signature", "types", "lists", "call"] {
        cases.compile_fail(format!("tests/ui/fail/{family}/*.rs"));
    }
    cases.pass("tests/ui/pass/*.rs");
}
