//! The record stage: every request runs in one span, and every request that
//! names a declaration leaves exactly one receipt, refusals included.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use serde_json::json;
use typed_mcp_core::catalog::Catalog;
use typed_mcp_core::digest::Digest;
use typed_mcp_core::router::ResourceMatch;
use typed_mcp_core::wire::{CallToolResult, ResultType};
use typed_mcp_core::{AnsweredRequest, Call, Declaration, RequestId, RpcError, Target, encode};

use crate::cancel::CallCancel;
use crate::capability::{Capability, Grant};
use crate::context::{Principal, ToolContext};
use crate::receipt::{Outcome, Receipt};
use crate::server::Server;
use crate::trace::TraceContext;
use crate::transport::{NotGranted, Reply};

use crate::capability::{MISSING_CAPABILITIES_META_KEY, NOT_GRANTED as CAPABILITY_NOT_GRANTED};

impl Server {
    /// Checks that `principal` holds every capability the call's declaration
    /// needs. A refused call is answered at once — it neither waits for a
    /// handler slot nor runs — and its receipt recorded; `Err` is the answer.
    pub(crate) fn check_grants(
        &self,
        call: &Call,
        principal: Option<&Principal>,
        record: CallRecord,
    ) -> Result<CallRecord, Reply> {
        let Some(caps) = &record.caps else {
            return Ok(record);
        };
        let missing = match self.inner.grants.resolve(caps, principal) {
            Ok(granted) => {
                let mut record = record;
                if let Some(receipt) = &mut record.pending {
                    receipt.scopes = granted
                        .iter()
                        .filter(|g| !g.scope.is_unscoped())
                        .map(|g| (g.capability.name().to_owned(), g.scope.texts()))
                        .collect();
                }
                // Nothing granted reads as nothing set (`granted_scope`
                // finds no grant either way): no empty list is allocated.
                record.granted = (!granted.is_empty()).then(|| granted.into());
                return Ok(record);
            }
            Err(missing) => missing,
        };
        let subject = self.subject(&call.target).expect("a declaration's call");
        let body = self.refusal(&call.id, &subject, &missing);
        record.finish(Outcome::Refused {
            missing: missing.iter().map(|c| c.name().to_owned()).collect(),
        });
        // What was refused travels with the reply, for a transport's own
        // challenge (an OAuth scope challenge), without reading the body.
        let mut reply = Reply::new(body, 200);
        reply.not_granted = Some(Arc::new(NotGranted {
            required: subject.caps.clone(),
            missing,
        }));
        Err(reply)
    }

    /// What a call is for, when it calls a declaration (and so gets a receipt).
    pub(crate) fn subject(&self, target: &Target) -> Option<Subject<'_>> {
        match target {
            Target::Tool { index, .. } => self.subject_of(&DeclarationRef::Tool(*index)),
            Target::Prompt { index, .. } => self.subject_of(&DeclarationRef::Prompt(*index)),
            Target::Resource { uri, matched } => {
                self.subject_of(&DeclarationRef::Resource { uri, matched })
            }
            Target::Listen { .. } | Target::Complete { .. } | Target::Extension { .. } => None,
        }
    }

    /// The subject of a declaration.
    fn subject_of(&self, declaration: &DeclarationRef<'_>) -> Option<Subject<'_>> {
        let catalog = self.catalog();
        Some(match *declaration {
            DeclarationRef::Tool(index) => {
                let entry = catalog.tools().get(index)?;
                Subject {
                    method: "tools/call",
                    name: &entry.tool.name,
                    uri: None,
                    digest: DigestOf::Tool(index),
                    caps: self.inner.tools[index].caps.clone(),
                }
            }
            DeclarationRef::Prompt(index) => {
                let entry = catalog.prompts().get(index)?;
                Subject {
                    method: "prompts/get",
                    name: &entry.prompt.name,
                    uri: None,
                    digest: DigestOf::Prompt(index),
                    caps: self.inner.prompts[index].2.clone(),
                }
            }
            DeclarationRef::Resource { uri, matched } => {
                let (name, digest, caps) = match matched {
                    ResourceMatch::Static(i) => {
                        let entry = &catalog.resources()[*i];
                        (
                            &entry.resource.name,
                            DigestOf::Resource(*i),
                            self.inner.resources[*i].1.clone(),
                        )
                    }
                    ResourceMatch::Template { index, .. } => {
                        let entry = catalog.template(*index);
                        (
                            &entry.template.name,
                            DigestOf::Template(*index),
                            self.inner.templates[*index].2.clone(),
                        )
                    }
                };
                Subject {
                    method: "resources/read",
                    name,
                    uri: Some(uri.to_owned()),
                    digest,
                    caps,
                }
            }
        })
    }

    /// The answer to a call whose declaration needs capabilities the caller
    /// was not granted: a tool error the model can read (tools), or a
    /// JSON-RPC error (resources and prompts, whose results have no error
    /// form).
    fn refusal(&self, id: &RequestId, subject: &Subject, missing: &[Capability]) -> Vec<u8> {
        let names: Vec<&str> = missing.iter().map(|c| c.name()).collect();
        let described: Vec<String> = missing
            .iter()
            .map(|c| format!("{} ({})", c.name(), c.description()))
            .collect();
        let what = match subject.method {
            "tools/call" => format!("the tool {:?}", subject.name),
            "prompts/get" => format!("the prompt {:?}", subject.name),
            _ => format!("the resource {:?}", subject.name),
        };
        let message = format!(
            "refused: {what} needs the {} {}, which {} not granted to this caller",
            if missing.len() == 1 {
                "capability"
            } else {
                "capabilities"
            },
            described.join(", "),
            if missing.len() == 1 { "is" } else { "are" },
        );
        tracing::debug!(method = subject.method, name = %subject.name, missing = ?names, "call refused");
        if subject.method == "tools/call" {
            let mut result = CallToolResult::error(message);
            result.result_type = ResultType::Complete;
            result.meta = self.meta();
            result
                .meta
                .other
                .insert(MISSING_CAPABILITIES_META_KEY.to_owned(), json!(names));
            encode::result(id, &result)
        } else {
            let error = RpcError::new(CAPABILITY_NOT_GRANTED, message)
                .with_data(json!({ "missingCapabilities": names }));
            encode::error(Some(id), &error)
        }
    }
}

/// A declaration named by a call or by a refused request.
pub(crate) enum DeclarationRef<'a> {
    Tool(usize),
    Prompt(usize),
    Resource {
        uri: &'a str,
        matched: &'a ResourceMatch,
    },
}

impl<'a> From<&'a Declaration> for DeclarationRef<'a> {
    fn from(declaration: &'a Declaration) -> Self {
        match declaration {
            Declaration::Tool(i) => DeclarationRef::Tool(*i),
            Declaration::Prompt(i) => DeclarationRef::Prompt(*i),
            Declaration::Resource { uri, matched } => DeclarationRef::Resource { uri, matched },
        }
    }
}

/// The declaration a call is for, as its receipt names it.
pub(crate) struct Subject<'a> {
    method: &'static str,
    name: &'a str,
    uri: Option<String>,
    digest: DigestOf,
    caps: Arc<[Capability]>,
}

/// Which declaration's digest a receipt names: looked up, and computed on
/// first use, only when a receipt is built.
#[derive(Clone, Copy)]
enum DigestOf {
    Tool(usize),
    Prompt(usize),
    Resource(usize),
    Template(usize),
}

impl DigestOf {
    fn get(self, catalog: &Catalog) -> &Digest {
        &match self {
            DigestOf::Tool(i) => catalog.tool_digest(i),
            DigestOf::Prompt(i) => catalog.prompt_digest(i),
            DigestOf::Resource(i) => catalog.resource_digest(i),
            DigestOf::Template(i) => catalog.template_digest(i),
        }
        .digest
    }
}

/// The record of one accepted call: its request span, and — for a call of a
/// declaration — its receipt. Opened when the call is accepted, so a call
/// cancelled even before it starts (waiting for a handler slot) leaves a
/// receipt; [`finish`](Self::finish) records the outcome, and a record dropped
/// unfinished (the call's task aborted) records `Cancelled`.
pub(crate) struct CallRecord {
    server: Server,
    /// The capabilities the declaration needs; `None` for calls that are not
    /// of a declaration (subscriptions, completions).
    pub(crate) caps: Option<Arc<[Capability]>>,
    /// The grants of those capabilities, with their scopes, once the grants
    /// were checked.
    pub(crate) granted: Option<Arc<[Grant]>>,
    /// `None` when no sink wants receipts now: nothing is built. Boxed: a
    /// receipt is 400 bytes, and the record is moved several times on every
    /// call's way, receipts or not.
    pending: Option<Box<Receipt>>,
    /// When the call was accepted; read only for a receipt, so taken only
    /// when one is pending (a clock read is not free in every VM).
    started: Option<Instant>,
    /// The call's cancellation; `None` for a request the router answered.
    cancel: Option<CallCancel>,
    span: tracing::Span,
    done: bool,
}

impl CallRecord {
    /// Hands the call's context what the grant check settled: the
    /// capabilities its declaration names (the ceiling of what the handler
    /// may use) and their grants, with the scopes the host narrowed them to.
    pub(crate) fn grant_to(&self, ctx: &ToolContext) {
        if let Some(caps) = &self.caps {
            ctx.set_scope(caps.clone());
        }
        if let Some(granted) = &self.granted {
            ctx.set_grants(granted.clone());
        }
    }

    /// The span the call runs in.
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Names the task the call runs as, and makes the task's own
    /// cancellation the one whose state [`finish`](Self::finish) reads (the
    /// creating request is answered long before the task ends).
    pub(crate) fn run_as_task(&mut self, task_id: &str, cancel: &CallCancel) {
        if let Some(receipt) = &mut self.pending {
            receipt.task_id = Some(task_id.to_owned());
        }
        self.cancel = Some(cancel.clone());
    }

    pub(crate) fn finish(mut self, outcome: Outcome) {
        // A call cancelled while finishing gets no response: say so.
        let outcome = if self.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            Outcome::Cancelled
        } else {
            outcome
        };
        self.record(outcome);
    }

    fn record(&mut self, mut outcome: Outcome) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let code;
        let error_type = match &outcome {
            Outcome::Completed | Outcome::InputRequired => None,
            Outcome::Error { code: c } => {
                code = c.to_string();
                Some(code.as_str())
            }
            Outcome::Panicked => Some("-32603"),
            Outcome::Failed { .. } => Some("tool_error"),
            other => Some(other.kind()),
        };
        crate::trace::record_outcome(&self.span, outcome.kind(), error_type);
        let Some(mut receipt) = self.pending.take() else {
            return;
        };
        if matches!(outcome, Outcome::Refused { .. }) {
            receipt.scope.clear();
            receipt.scopes.clear();
        }
        let redactor = &self.server.inner.redactor;
        if !redactor.is_empty() {
            let asked = match &mut outcome {
                Outcome::RefusedInCall { asked, .. } => Some(asked),
                _ => None,
            };
            for text in [
                Some(&mut receipt.name),
                receipt.uri.as_mut(),
                receipt.principal.as_mut(),
                asked,
            ]
            .into_iter()
            .flatten()
            {
                *text = redactor.redact_str(text).into_owned();
            }
        }
        receipt.outcome = outcome;
        receipt.duration_us = self.started.map_or(0, |started| {
            started.elapsed().as_micros().try_into().unwrap_or(u64::MAX)
        });
        for sink in &self.server.inner.receipt_sinks {
            sink.record(&receipt);
        }
    }
}

impl Drop for CallRecord {
    fn drop(&mut self) {
        self.record(Outcome::Cancelled);
    }
}

impl Server {
    /// Opens the record of a call as it is accepted (see [`CallRecord`]).
    pub(crate) fn open_record(
        &self,
        call: &Call,
        principal: Option<&Principal>,
        cancel: &CallCancel,
    ) -> (CallRecord, TraceContext) {
        let subject = self.subject(&call.target);
        let method = match (&subject, &call.target) {
            (Some(s), _) => s.method,
            (None, Target::Listen { .. }) => "subscriptions/listen",
            (None, Target::Extension { index, .. }) => {
                self.router().extension_methods()[*index].method.as_str()
            }
            (None, _) => "completion/complete",
        };
        let trace = TraceContext::from_meta(&call.meta);
        let version = Some(call.meta.protocol_version.as_str());
        self.open(
            method,
            &call.id,
            subject,
            principal,
            trace,
            version,
            Some(cancel),
        )
    }

    /// Opens the record of a request the router answered itself: its span,
    /// and its receipt when it named a declaration. The caller finishes it.
    pub(crate) fn open_answered(
        &self,
        request: &AnsweredRequest,
        principal: Option<&Principal>,
    ) -> CallRecord {
        let subject = request
            .declaration
            .as_ref()
            .and_then(|d| self.subject_of(&DeclarationRef::from(d)));
        let trace = TraceContext::from_headers(
            request.traceparent.as_deref(),
            request.tracestate.as_deref(),
        );
        self.open(
            &request.method,
            &request.id,
            subject,
            principal,
            trace,
            request.protocol_version.as_deref(),
            None,
        )
        .0
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        &self,
        method: &str,
        id: &RequestId,
        subject: Option<Subject<'_>>,
        principal: Option<&Principal>,
        mut trace: TraceContext,
        protocol_version: Option<&str>,
        cancel: Option<&CallCancel>,
    ) -> (CallRecord, TraceContext) {
        let span = crate::trace::request_span(
            method,
            subject.as_ref().map_or("", |s| s.name),
            id,
            principal.map(Principal::id),
            &mut trace,
        );
        let sinks = &self.inner.receipt_sinks;
        let pending = subject
            .as_ref()
            .filter(|_| sinks.iter().any(|s| s.enabled()))
            .map(|subject| {
                Box::new(Receipt {
                    time: crate::receipt::rfc3339(SystemTime::now()),
                    request_id: serde_json::to_value(id).unwrap_or_default(),
                    method: subject.method.to_owned(),
                    name: subject.name.to_owned(),
                    uri: subject.uri.clone(),
                    digest: Some(subject.digest.get(self.catalog()).to_string()),
                    principal: principal.map(|p| p.id().to_owned()),
                    scope: subject.caps.iter().map(|c| c.name().to_owned()).collect(),
                    scopes: Default::default(),
                    outcome: Outcome::Cancelled,
                    duration_us: 0,
                    trace_id: trace.trace_id().to_string(),
                    protocol_version: protocol_version.map(str::to_owned),
                    task_id: None,
                })
            });
        let record = CallRecord {
            server: self.clone(),
            caps: subject.map(|s| s.caps),
            granted: None,
            started: pending.as_ref().map(|_| Instant::now()),
            pending,
            cancel: cancel.cloned(),
            span,
            done: false,
        };
        (record, trace)
    }
}
