//! The JSON Schemas the macros derive from Rust types, for declarations
//! written by hand that want the same schemas as `#[tool]` would publish.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! /// Where to look.
//! #[derive(Deserialize, JsonSchema)]
//! struct Search {
//!     /// Words to find.
//!     query: String,
//! }
//!
//! let schema = typed_mcp::schema::input_schema_for::<Search>();
//! assert_eq!(schema["type"], "object");
//! assert_eq!(schema["properties"]["query"]["description"], "Words to find.");
//! ```

pub use crate::typed::args::ARGUMENT_ERRORS_META_KEY;
pub use crate::typed::schema::{
    WRAPPED_RESULT_KEY, input_schema_for, output_schema_for, schema_for,
};
