//! The handler stage of an extension method (see
//! [`extension`](crate::extension)): the server's deadline, the
//! application's layers and a caught panic, as for every handler.

use serde_json::{Map, Value, json};
use typed_mcp_core::wire::meta_keys;
use typed_mcp_core::{RequestId, RpcError, encode};

use super::{Slot, Stage};
use crate::context::ToolContext;
use crate::receipt::Outcome;
use crate::server::Server;

impl Server {
    pub(super) async fn invoke_extension(
        &self,
        id: &RequestId,
        index: usize,
        params: Map<String, Value>,
        ctx: ToolContext,
        slot: Slot,
        outcome: &mut Option<Outcome>,
    ) -> Result<Vec<u8>, RpcError> {
        let method = crate::extension::interned(&self.router().extension_methods()[index].method);
        let handler = &self.inner.extensions[index];
        let stage = Stage {
            timeout: self.inner.default_timeout,
            method,
            name: method,
            may_ask: false,
        };
        let mut result = self
            .run_stage(handler, params, &ctx, slot, stage)
            .await
            .map_err(|stopped| self.stopped("extension method", method, stopped, outcome))??;
        // A result says what it is (SEP-2322); the extension's own kinds
        // (a task handle) set theirs.
        result
            .entry("resultType")
            .or_insert_with(|| json!("complete"));
        let meta = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.entry(meta_keys::SERVER_INFO)
                .or_insert_with(|| json!(&**self.catalog().server_info()));
        }
        Ok(encode::result(id, &Value::Object(result)))
    }
}
