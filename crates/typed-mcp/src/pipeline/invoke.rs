//! The handler stage of every kind of call: state, deadline, the
//! application's layers, the handler, and the output mapped to its wire
//! result.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};
use typed_mcp_core::legacy::{downgrade_message, encode_call_result, is_legacy_version};
use typed_mcp_core::router::{CompletionTarget, ResourceMatch};
use typed_mcp_core::wire::{
    CallToolResult, CompleteResult, Completion, ContentBlock, GetPromptResult, InputRequiredResult,
    ReadResourceResult, ResultMeta, ResultType, StructuredContent,
};
use typed_mcp_core::{RequestId, RpcError, Target, encode};

use super::record::CallRecord;
use super::{Slot, Stage, Stopped};
use crate::answer::{Answer, NeedsInput, check_input_requests};
use crate::context::{CallNote, Principal, ToolContext};
use crate::declare::Handler;
use crate::declare::{CompletionRequest, ResourceRequest, ToolError};
use crate::receipt::Outcome;
use crate::server::Server;
use crate::session::LegacySession;
use crate::state::{BindingDigest, StateBinding};
use crate::subscribe;
use crate::transport::Reply;

impl Server {
    /// Verifies the `requestState` of a retry and hands its plaintext to the
    /// handler's context; a state this server did not seal for this request is
    /// `-32602` and the handler never runs.
    pub(crate) fn open_state(
        &self,
        token: Option<String>,
        binding: &BindingDigest,
        name: &str,
        ctx: &ToolContext,
    ) -> Result<(), RpcError> {
        if let Some(token) = token {
            let state = self
                .inner
                .state_keys
                .open(&token, binding, SystemTime::now())
                .map_err(|e| {
                    tracing::warn!(%name, error = %e, "refused a requestState");
                    RpcError::invalid_params(e.to_string())
                })?;
            ctx.set_request_state(state);
        }
        Ok(())
    }

    /// Encodes an `input_required` result, sealing its state for this
    /// request; refuses (`-32021`) to ask for a kind of input the client did
    /// not declare.
    fn input_required(
        &self,
        id: &RequestId,
        name: &str,
        needs: NeedsInput,
        binding: &BindingDigest,
        ctx: &ToolContext,
    ) -> Result<Vec<u8>, RpcError> {
        let mut asked: InputRequiredResult = needs.into_result();
        check_input_requests(&asked, ctx)?;
        if asked.input_requests.as_ref().is_none_or(|r| r.is_empty())
            && asked.request_state.is_none()
        {
            return Err(RpcError::internal(format!(
                "{name:?} asked for input without inputRequests or requestState"
            )));
        }
        // The client must be able neither to read nor to forge it.
        if let Some(state) = asked.request_state.take() {
            asked.request_state = Some(self.inner.state_keys.seal(
                &state,
                binding,
                SystemTime::now(),
                self.inner.state_ttl,
            ));
        }
        // Not cacheable, so no cache hints; identified like every result.
        asked.result_type = ResultType::InputRequired;
        Ok(self.encode_stamped(id, &mut asked))
    }

    /// `result`'s response with the server named in its `_meta`, for every
    /// result a handler produced. A `_meta` that holds nothing else (nearly
    /// every result) is the one the catalog encoded once, not serialized again
    /// for every call.
    fn encode_stamped<R: Stamped>(&self, id: &RequestId, result: &mut R) -> Vec<u8> {
        let catalog = self.catalog();
        if result.meta_mut().is_empty() {
            let expected_len = result.expected_len();
            return encode::result_with_meta_sized(
                id,
                result,
                catalog.server_meta_json(),
                expected_len,
            );
        }
        result.meta_mut().server_info = Some(catalog.server_info().clone());
        encode::result(id, result)
    }

    fn handler_panicked(&self, kind: &str, name: &str, panic: &str) -> RpcError {
        // The panic message stays in the server's log, without secrets: it
        // may hold internal detail.
        let panic = self.inner.redactor.redact_str(panic);
        tracing::error!(%kind, %name, %panic, "handler panicked");
        RpcError::internal(format!(
            "the {kind} {name:?} failed unexpectedly (handler panicked)"
        ))
    }

    pub(crate) fn meta(&self) -> ResultMeta {
        ResultMeta::server(self.catalog().server_info().clone())
    }

    /// Runs the handler a call is for and encodes its response (a result or a
    /// JSON-RPC error). A panicking handler becomes `-32603`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn invoke(
        &self,
        id: &RequestId,
        target: Target,
        request_state: Option<String>,
        ctx: ToolContext,
        record: CallRecord,
        slot: Slot,
        session: Option<&Arc<LegacySession>>,
    ) -> Reply {
        // The grants were checked when the call was accepted.
        record.grant_to(&ctx);
        let mut outcome = None;
        let reply = match self
            .invoke_target(id, target, request_state, ctx, slot, session, &mut outcome)
            .await
        {
            Ok(body) => Reply::new(body, 200),
            Err(e) => {
                outcome.get_or_insert(Outcome::Error { code: e.code });
                Reply::error(Some(id), &e)
            }
        };
        record.finish(outcome.unwrap_or(Outcome::Completed));
        reply
    }

    /// The error a call answers when its handler stage stopped without a
    /// value (for tools, a timeout is a tool error instead: see the tool arm).
    pub(super) fn stopped(
        &self,
        kind: &'static str,
        name: &str,
        stopped: Stopped,
        outcome: &mut Option<Outcome>,
    ) -> RpcError {
        match stopped {
            Stopped::Panicked(panic) => {
                *outcome = Some(Outcome::Panicked);
                self.handler_panicked(kind, name, &panic)
            }
            Stopped::TimedOut(limit) => {
                *outcome = Some(timed_out(limit));
                RpcError::internal(format!(
                    "the {kind} {name:?} timed out after {}",
                    human_duration(limit)
                ))
            }
            Stopped::NoInput(message) => {
                let error = RpcError::invalid_request(message);
                *outcome = Some(Outcome::Error { code: error.code });
                error
            }
            Stopped::Refused(error) => {
                let error = super::layer_refusal(error);
                *outcome = Some(Outcome::RefusedByLayer {
                    reason: self.redactor().redact_str(&error.message).into_owned(),
                });
                error
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn invoke_target(
        &self,
        id: &RequestId,
        target: Target,
        request_state: Option<String>,
        ctx: ToolContext,
        slot: Slot,
        session: Option<&Arc<LegacySession>>,
        outcome: &mut Option<Outcome>,
    ) -> Result<Vec<u8>, RpcError> {
        let catalog = self.catalog();
        let default_timeout = self.inner.default_timeout;
        match target {
            Target::Tool { index, arguments } => {
                let entry = &catalog.tools()[index];
                let name = &entry.tool.name;
                let asks_input = self.inner.tools[index].asks_input;
                // The request binding (a hash of the arguments) is needed only to
                // open or seal a state: most calls skip it.
                let binding = (asks_input || request_state.is_some()).then(|| {
                    StateBinding {
                        method: "tools/call",
                        target: name,
                        arguments: Some(&arguments.to_map()),
                        principal: ctx.principal().map(Principal::id),
                    }
                    .digest()
                });
                if let Some(binding) = &binding {
                    self.open_state(request_state, binding, name, &ctx)?;
                }
                let decl = &self.inner.tools[index];
                let stage = Stage {
                    timeout: decl.timeout,
                    method: "tools/call",
                    name,
                    may_ask: asks_input,
                };
                // Boxed too: inline, its rounds (750 bytes) made the boxed
                // call future (1.7 KB) too large for the allocator's fast path
                // for small blocks (~1 KB), which costs more than two small
                // blocks do.
                let (finished, ctx) =
                    Box::pin(self.run_rounds(&decl.handler, arguments, ctx, slot, stage, session))
                        .await;
                let outcome_of_handler = match finished {
                    Ok(reply) => reply,
                    Err(Stopped::NoInput(message)) => Err(ToolError::execution(message)),
                    Err(Stopped::TimedOut(limit)) => {
                        // A model reads a timeout best as a tool error.
                        *outcome = Some(timed_out(limit));
                        Err(ToolError::execution(format!(
                            "tool {name:?} timed out after {}",
                            human_duration(limit)
                        )))
                    }
                    Err(stopped) => return Err(self.stopped("tool", name, stopped, outcome)),
                };
                let mut result = match outcome_of_handler {
                    Ok(Answer::Done(result)) => result,
                    Ok(Answer::NeedsInput(asked)) => {
                        let Some(binding) = &binding else {
                            return Err(RpcError::internal(format!(
                                "tool {name:?} asked for input but was declared with a handler that cannot"
                            )));
                        };
                        let body = self.input_required(id, name, asked, binding, &ctx)?;
                        *outcome = Some(Outcome::InputRequired);
                        // The caller leaves a tool's result in the shape it is
                        // given (see below).
                        let version = &ctx.meta().protocol_version;
                        return Ok(match downgrade_message(&body, version) {
                            std::borrow::Cow::Owned(shaped) => shaped,
                            std::borrow::Cow::Borrowed(_) => body,
                        });
                    }
                    Err(ToolError::Execution(message)) => CallToolResult::error(message),
                    Err(ToolError::Protocol(e)) => return Err(e),
                };
                if entry.tool.output_schema.is_some()
                    && !result.is_error()
                    && result.structured_content.is_none()
                {
                    tracing::error!(tool = %name, "tool declares an output schema but returned no structuredContent");
                    return Err(RpcError::internal(format!(
                        "tool {name:?} declares an output schema but returned no structured content"
                    )));
                }
                if result.is_error() && outcome.is_none() {
                    let refusal = ctx.take_refusal();
                    *outcome = Some(match ctx.take_note() {
                        // A scoped handle refused, and the tool failed: the
                        // refusal is what the receipt must show.
                        _ if refusal.is_some() => {
                            let (capability, asked) = refusal.expect("checked");
                            Outcome::RefusedInCall { capability, asked }
                        }
                        Some(CallNote::InvalidArguments) => Outcome::InvalidArguments,
                        Some(CallNote::Error {
                            error_type,
                            variant,
                        }) => Outcome::Failed {
                            error_type: Some(error_type.to_owned()),
                            variant,
                        },
                        None => Outcome::Failed {
                            error_type: None,
                            variant: None,
                        },
                    });
                }
                // A dated client's result is encoded in its revision's shape
                // at once, not encoded, parsed back and encoded again.
                let version = &ctx.meta().protocol_version;
                if is_legacy_version(version) {
                    return Ok(encode_call_result(id, &result, version));
                }
                result.result_type = ResultType::Complete;
                Ok(self.encode_stamped(id, &mut result))
            }
            Target::Resource { uri, matched } => {
                let (handler, cache, variables) = match matched {
                    ResourceMatch::Static(i) => (
                        &self.inner.resources[i].0,
                        catalog.resources()[i].cache,
                        Vec::new(),
                    ),
                    ResourceMatch::Template { index, variables } => {
                        let entry = catalog.template(index);
                        (&self.inner.templates[index].0, entry.cache, variables)
                    }
                };
                let binding = StateBinding {
                    method: "resources/read",
                    target: &uri,
                    arguments: None,
                    principal: ctx.principal().map(Principal::id),
                }
                .digest();
                self.open_state(request_state, &binding, &uri, &ctx)?;
                let request = ResourceRequest {
                    uri: uri.clone(),
                    variables,
                };
                let stage = Stage {
                    timeout: default_timeout,
                    method: "resources/read",
                    name: &uri,
                    may_ask: true,
                };
                // Boxed, like every arm: the largest arm sets the size of
                // every call's future.
                let (reply, ctx) =
                    Box::pin(self.run_rounds(handler, request, ctx, slot, stage, session)).await;
                let reply =
                    reply.map_err(|stopped| self.stopped("resource", &uri, stopped, outcome))??;
                let contents = match reply {
                    Answer::Done(contents) => contents,
                    Answer::NeedsInput(asked) => {
                        let body = self.input_required(id, &uri, asked, &binding, &ctx)?;
                        *outcome = Some(Outcome::InputRequired);
                        return Ok(body);
                    }
                };
                if contents.is_empty() {
                    return Err(RpcError::resource_not_found(&uri));
                }
                Ok(self.encode_stamped(id, &mut ReadResourceResult::new(contents, cache)))
            }
            Target::Prompt { index, arguments } => {
                let name = &catalog.prompts()[index].prompt.name;
                let as_map: serde_json::Map<String, serde_json::Value> = arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect();
                let binding = StateBinding {
                    method: "prompts/get",
                    target: name,
                    arguments: Some(&as_map),
                    principal: ctx.principal().map(Principal::id),
                }
                .digest();
                self.open_state(request_state, &binding, name, &ctx)?;
                let handler = &self.inner.prompts[index].0;
                let stage = Stage {
                    timeout: default_timeout,
                    method: "prompts/get",
                    name,
                    may_ask: true,
                };
                let (reply, ctx) =
                    Box::pin(self.run_rounds(handler, arguments, ctx, slot, stage, session)).await;
                let reply =
                    reply.map_err(|stopped| self.stopped("prompt", name, stopped, outcome))??;
                match reply {
                    Answer::Done(mut result) => {
                        result.result_type = ResultType::Complete;
                        Ok(self.encode_stamped(id, &mut result))
                    }
                    Answer::NeedsInput(asked) => {
                        let body = self.input_required(id, name, asked, &binding, &ctx)?;
                        *outcome = Some(Outcome::InputRequired);
                        Ok(body)
                    }
                }
            }
            Target::Listen { filter } => {
                Ok(Box::pin(subscribe::listen(self, id, filter, ctx)).await)
            }
            Target::Extension { index, params } => {
                Box::pin(self.invoke_extension(id, index, params, ctx, slot, outcome)).await
            }
            Target::Complete {
                target,
                argument,
                context,
            } => {
                let completer = match target {
                    CompletionTarget::Prompt(i) => self.inner.prompts[i].1.as_ref(),
                    CompletionTarget::Template(i) => self.inner.templates[i].1.as_ref(),
                };
                let mut values = match completer {
                    Some(completer) => {
                        let request = CompletionRequest {
                            argument: argument.name.clone(),
                            value: argument.value,
                            context,
                        };
                        let name = &argument.name;
                        let stage = Stage {
                            timeout: default_timeout,
                            method: "completion/complete",
                            name,
                            may_ask: false,
                        };
                        Box::pin(self.run_stage(completer, request, &ctx, slot, stage))
                            .await
                            .map_err(|stopped| {
                                self.stopped("completer", name, stopped, outcome)
                            })??
                    }
                    None => Vec::new(),
                };
                let total = values.len() as u64;
                let has_more = values.len() > 100;
                values.truncate(100);
                let mut result = CompleteResult::new(
                    Completion::new(values)
                        .with_total(total)
                        .with_has_more(has_more),
                );
                Ok(self.encode_stamped(id, &mut result))
            }
        }
    }
}

/// How many times in a row a handler may ask a legacy client for input
/// before the call ends: each round is a request the person answers.
const MAX_INPUT_ROUNDS: usize = 16;

/// A handler's value that may be a request for input first.
trait MayAsk: Sized {
    /// The value, or what the handler asks for.
    fn needs_input(self) -> Result<Self, NeedsInput>;
}

impl<T, E> MayAsk for Result<Answer<T>, E> {
    fn needs_input(self) -> Result<Self, NeedsInput> {
        match self {
            Ok(Answer::NeedsInput(needs)) => Err(needs),
            other => Ok(other),
        }
    }
}

impl Server {
    /// The handler stage, and for a call of a legacy session whose handler
    /// asks for input, the requests to the client (on the call's own stream)
    /// and the rounds that follow with the client's answers, until the
    /// handler answers. A 2026-07-28 call runs once: its request for input
    /// becomes an `input_required` result. Returns the context of the last
    /// round (the typed layer notes the outcome there).
    async fn run_rounds<I, O>(
        &self,
        handler: &Handler<I, O>,
        input: I,
        ctx: ToolContext,
        slot: Slot,
        stage: Stage<'_>,
        session: Option<&Arc<LegacySession>>,
    ) -> (Result<O, Stopped>, ToolContext)
    where
        I: Clone + Send + 'static,
        O: MayAsk + Send + 'static,
    {
        // Only a legacy call whose handler can ask keeps its input for a
        // second round; every other call runs once, its input moved in.
        if !stage.may_ask || !is_legacy_version(&ctx.meta().protocol_version) {
            let finished = self.run_stage(handler, input, &ctx, slot, stage).await;
            return (finished, ctx);
        }
        // Boxed: the rounds wait on the client too, and inline they would
        // double the future of every call, which runs once.
        Box::pin(self.run_asking_rounds(handler, input, ctx, slot, stage, session)).await
    }

    /// The rounds of a legacy call whose handler may ask for input: run,
    /// ask the client on the call's stream, run again with its answers.
    async fn run_asking_rounds<I, O>(
        &self,
        handler: &Handler<I, O>,
        input: I,
        ctx: ToolContext,
        slot: Slot,
        stage: Stage<'_>,
        session: Option<&Arc<LegacySession>>,
    ) -> (Result<O, Stopped>, ToolContext)
    where
        I: Clone + Send + 'static,
        O: MayAsk + Send + 'static,
    {
        let (mut ctx, mut slot) = (ctx, slot);
        let mut round = 0;
        loop {
            round += 1;
            let finished = self
                .run_stage(handler, input.clone(), &ctx, slot.take(), stage)
                .await;
            let needs = match finished.map(MayAsk::needs_input) {
                Ok(Ok(value)) => return (Ok(value), ctx),
                Err(stopped) => return (Err(stopped), ctx),
                Ok(Err(needs)) => needs,
            };
            if round >= MAX_INPUT_ROUNDS {
                let message = format!(
                    "{:?} asked the client for input {MAX_INPUT_ROUNDS} times in a row; the call ends",
                    stage.name
                );
                return (Err(Stopped::NoInput(message)), ctx);
            }
            match self.ask_client(session, &ctx, stage.name, needs).await {
                Ok((responses, state)) => {
                    let next = ctx.next_round(responses, state);
                    ctx.finish();
                    ctx = next;
                    // Waiting for a person held no slot; running again takes one.
                    slot = Some(self.acquire_slot().await);
                }
                Err(message) => return (Err(Stopped::NoInput(message)), ctx),
            }
        }
    }

    /// Sends a legacy client the requests a handler asked for, one after the
    /// other, and collects the answers by key (the shape a 2026-07-28 client
    /// sends as `inputResponses`). Only kinds the client declared at
    /// `initialize` are sent; without a session nothing can be.
    async fn ask_client(
        &self,
        session: Option<&Arc<LegacySession>>,
        ctx: &ToolContext,
        name: &str,
        needs: NeedsInput,
    ) -> Result<(Map<String, Value>, Option<String>), String> {
        let asked = needs.into_result();
        // Without a session, what the client declared is unknown (it could
        // declare nothing): say why no request can be sent at all.
        let Some(session) = session else {
            let methods: Vec<&str> = asked
                .input_requests
                .iter()
                .flat_map(|requests| requests.values())
                .filter_map(|r| r.get("method").and_then(Value::as_str))
                .collect();
            return Err(format!(
                "{name:?} needs input from the client ({}), but this request came without a session that could carry a request to the client: initialize a session (and send its Mcp-Session-Id), or use MCP 2026-07-28",
                methods.join(", ")
            ));
        };
        if let Err(refusal) = check_input_requests(&asked, ctx) {
            let missing: Vec<String> = refusal
                .data
                .as_ref()
                .and_then(|d| d.get("requiredCapabilities").or(Some(d)))
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            return Err(format!(
                "{name:?} needs the client capability {} to ask for input, and this client did not declare it at initialize",
                missing.join(", ")
            ));
        }
        let requests = asked.input_requests.unwrap_or_default();
        let mut responses = Map::new();
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            let redact = |body: Vec<u8>| {
                let redacted = match ctx.redactor().redact_json(&body) {
                    std::borrow::Cow::Owned(redacted) => Some(redacted),
                    std::borrow::Cow::Borrowed(_) => None,
                };
                redacted.unwrap_or(body)
            };
            let answer = session
                .peer
                .request(
                    ctx.outbox(),
                    redact,
                    method,
                    &params,
                    &ctx.cancellation_token(),
                    self.inner.input_wait,
                )
                .await?;
            responses.insert(key, answer);
        }
        Ok((responses, asked.request_state))
    }
}

fn timed_out(limit: Duration) -> Outcome {
    Outcome::TimedOut {
        after_ms: limit.as_millis().try_into().unwrap_or(u64::MAX),
    }
}

/// A deadline as people write it: `30s`, `250ms`, `1.5s`.
fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}s", (ms as f64) / 1000.0)
    }
}

/// A result that names the server in its `_meta`, serialized as its last
/// member (as [`encode::result_with_meta`] writes it).
trait Stamped: serde::Serialize {
    fn meta_mut(&mut self) -> &mut ResultMeta;

    /// About how long the encoded result is, when it may be long (see
    /// [`encode::result_with_meta_sized`]); 0 when it is surely short.
    fn expected_len(&self) -> usize {
        0
    }
}

impl Stamped for CallToolResult {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }

    /// Its text blocks (with room for a few escapes) and its structured
    /// content when that is already text: the bulk of a large result.
    fn expected_len(&self) -> usize {
        let text: usize = self
            .content
            .iter()
            .map(|block| match block {
                ContentBlock::Text { text, .. } => text.len(),
                _ => 0,
            })
            .sum();
        let structured = self
            .structured_content
            .as_ref()
            .and_then(StructuredContent::as_json)
            .map_or(0, str::len);
        text + text / 64 + structured + 256
    }
}

macro_rules! stamped {
    ($($result:ty),*) => {$(
        impl Stamped for $result {
            fn meta_mut(&mut self) -> &mut ResultMeta {
                &mut self.meta
            }
        }
    )*};
}

// `_meta` is the last member of each (the encode tests hold them to it).
stamped!(
    GetPromptResult,
    InputRequiredResult,
    ReadResourceResult,
    CompleteResult
);
