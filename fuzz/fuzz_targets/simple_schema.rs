//! The validity check of simple input schemas (`typed/simple_schema.rs`)
//! against jsonschema, which it stands in for on valid calls.
//!
//! Input format: a JSON array whose first element is a schema and whose
//! other elements are instances.
//!
//! Properties: nothing panics; a schema the simple check compiles is one
//! jsonschema compiles; on every instance both say the same.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(values)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Some((schema, instances)) = values.split_first() else {
        return;
    };
    match typed_mcp::simple_schema_beside_full(schema, instances) {
        None => {}
        Some(Err(refused)) => panic!("jsonschema refuses a simple schema ({refused}): {schema}"),
        Some(Ok(answers)) => {
            for (instance, (simple, full)) in instances.iter().zip(answers) {
                assert_eq!(simple, full, "schema {schema}\ninstance {instance}");
            }
        }
    }
});
