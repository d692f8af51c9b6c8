//! Notification parameters, and the listen filter.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{LoggingLevel, ResultMeta};
use crate::{ProgressToken, RequestId};

/// `notifications/cancelled`: the client abandons a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelledNotificationParams {
    /// The id of the request to cancel.
    pub request_id: RequestId,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl CancelledNotificationParams {
    /// A cancellation of `request_id`.
    pub fn new(request_id: RequestId) -> Self {
        CancelledNotificationParams {
            request_id,
            reason: None,
        }
    }

    option_setters! {
        /// Sets why, for logs.
        with_reason => reason: String;
    }
}

/// `notifications/progress`: how far a request has come.
///
/// ```
/// use typed_mcp_core::RequestId;
/// use typed_mcp_core::wire::{
///     LoggingLevel, LoggingMessageNotificationParams, Notification, ProgressNotificationParams,
///     methods,
/// };
/// use serde_json::json;
///
/// let progress = ProgressNotificationParams::new(RequestId::integer(1), 50.0).with_total(100.0);
/// assert_eq!(
///     serde_json::to_value(Notification::new(methods::PROGRESS, progress)).unwrap(),
///     json!({"jsonrpc": "2.0", "method": "notifications/progress",
///            "params": {"progressToken": 1, "progress": 50.0, "total": 100.0}})
/// );
/// let log = LoggingMessageNotificationParams::new(LoggingLevel::Info, json!("started")).with_logger("desk");
/// assert_eq!(serde_json::to_value(&log).unwrap()["logger"], "desk");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressNotificationParams {
    /// The token the request carried in `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Increases with every notification.
    pub progress: f64,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// Human-readable status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ProgressNotificationParams {
    /// Progress `progress` of the request that carried `progress_token`.
    pub fn new(progress_token: ProgressToken, progress: f64) -> Self {
        ProgressNotificationParams {
            progress_token,
            progress,
            total: None,
            message: None,
        }
    }

    option_setters! {
        /// Sets the total.
        with_total => total = f64;
        /// Sets the human-readable status.
        with_message => message: String;
    }
}

/// `notifications/message`: a log line for a request that asked for them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON value.
    pub data: Value,
}

impl LoggingMessageNotificationParams {
    /// A log line of this severity.
    pub fn new(level: LoggingLevel, data: Value) -> Self {
        LoggingMessageNotificationParams {
            level,
            logger: None,
            data,
        }
    }

    option_setters! {
        /// Sets the logger's name.
        with_logger => logger: String;
    }
}

/// Which notifications a `subscriptions/listen` stream wants (`SubscriptionFilter`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids: a member the Tasks
    /// extension (`io.modelcontextprotocol/tasks`) adds to the filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

impl SubscriptionFilter {
    option_setters! {
        /// Sets whether to deliver `notifications/tools/list_changed`.
        with_tools_list_changed => tools_list_changed = bool;
        /// Sets whether to deliver `notifications/prompts/list_changed`.
        with_prompts_list_changed => prompts_list_changed = bool;
        /// Sets whether to deliver `notifications/resources/list_changed`.
        with_resources_list_changed => resources_list_changed = bool;
        /// Sets the URIs whose `notifications/resources/updated` to deliver.
        with_resource_subscriptions => resource_subscriptions: Vec<String>;
        /// Sets the task ids whose `notifications/tasks` to deliver (the
        /// Tasks extension).
        with_task_ids => task_ids: Vec<String>;
    }
}

/// `notifications/subscriptions/acknowledged`: the first message of a listen stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsAcknowledgedParams {
    /// The subset of the filter the server will honour.
    pub notifications: SubscriptionFilter,
    /// Carries the subscription id.
    #[serde(rename = "_meta")]
    pub meta: ResultMeta,
}

impl SubscriptionsAcknowledgedParams {
    /// The acknowledgement of `notifications`, carrying the subscription id in `meta`.
    pub fn new(notifications: SubscriptionFilter, meta: ResultMeta) -> Self {
        SubscriptionsAcknowledgedParams {
            notifications,
            meta,
        }
    }
}

/// Parameters of a `*/list_changed` notification on a listen stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListChangedParams {
    /// Carries the subscription id.
    #[serde(rename = "_meta")]
    pub meta: ResultMeta,
}

impl ListChangedParams {
    /// Parameters carrying the subscription id in `meta`.
    pub fn new(meta: ResultMeta) -> Self {
        ListChangedParams { meta }
    }
}

/// `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceUpdatedParams {
    /// The URI that changed (may be a sub-resource of the subscribed URI).
    pub uri: String,
    /// Carries the subscription id.
    #[serde(rename = "_meta")]
    pub meta: ResultMeta,
}

impl ResourceUpdatedParams {
    /// A change of `uri`, carrying the subscription id in `meta`.
    pub fn new(uri: impl Into<String>, meta: ResultMeta) -> Self {
        ResourceUpdatedParams {
            uri: uri.into(),
            meta,
        }
    }
}

/// A server notification ready to encode: `{"jsonrpc":"2.0","method":..,"params":..}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Notification<P> {
    /// Always `"2.0"`.
    pub jsonrpc: &'static str,
    /// The notification method.
    pub method: &'static str,
    /// Its parameters.
    pub params: P,
}

impl<P: Serialize> Notification<P> {
    /// A notification with these parameters.
    pub fn new(method: &'static str, params: P) -> Self {
        Notification {
            jsonrpc: "2.0",
            method,
            params,
        }
    }
}
