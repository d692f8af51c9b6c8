//! Notification parameters, and the listen filter.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{LoggingLevel, ResultMeta};
use crate::{ProgressToken, RequestId};

/// `notifications/cancelled`: the client abandons a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The id of the request to cancel.
    pub request_id: RequestId,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `notifications/progress`: how far a request has come.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// `notifications/message`: a log line for a request that asked for them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON value.
    pub data: Value,
}

/// Which notifications a `subscriptions/listen` stream wants (`SubscriptionFilter`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
}

/// `notifications/subscriptions/acknowledged`: the first message of a listen stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedParams {
    /// The subset of the filter the server will honour.
    pub notifications: SubscriptionFilter,
    /// Carries the subscription id.
    #[serde(rename = "_meta")]
    pub meta: ResultMeta,
}

/// Parameters of a `*/list_changed` notification on a listen stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListChangedParams {
    /// Carries the subscription id.
    #[serde(rename = "_meta")]
    pub meta: ResultMeta,
}

/// `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedParams {
    /// The URI that changed (may be a sub-resource of the subscribed URI).
    pub uri: String,
    /// Carries the subscription id.
    #[serde(rename = "_meta")]
    pub meta: ResultMeta,
}

/// A server notification ready to encode: `{"jsonrpc":"2.0","method":..,"params":..}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
