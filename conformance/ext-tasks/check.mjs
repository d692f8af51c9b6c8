// The TypeScript Tasks client (@modelcontextprotocol/ext-tasks) against a
// typed-mcp server over Streamable HTTP: it discovers the server with the
// SDK's Client, starts the support desk's rebuild_search_index tool (which
// the server runs as a task), polls it and collects the result. Then it
// starts another and follows it through task status notifications on a
// subscriptions/listen stream instead, the filter made and the
// acknowledgement and every notification read with the ext-tasks codecs. Run
// by scripts/tasks-check; exits 0 when both tasks completed with the
// expected result, 1 otherwise, printing what it saw.
//
// Usage: node check.mjs URL
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from "@modelcontextprotocol/ext-tasks/client";
import {
  contributeTaskFilterV2,
  isTaskStatusNotificationV2,
  readAcceptedTaskIdsV2,
  withTaskCapabilityV2,
} from "@modelcontextprotocol/ext-tasks/core/v2";

const url = process.argv[2];
if (!url) {
  console.error("usage: node check.mjs URL");
  process.exit(2);
}
const PROTOCOL_VERSION = "2026-07-28";
const clientInfo = { name: "typed-mcp-tasks-check", version: "0.0.0" };
const clientCapabilities = {};

const fail = (message) => {
  console.error(`tasks-check: FAIL: ${message}`);
  process.exit(1);
};

// What the ext-tasks client sends for tools/call and tasks/* on a
// 2026-07-28 server (the SDK's own codecs know no task shapes): one POST per
// request, with the standard headers the transport requires.
let nextId = 1;
const seen = [];
async function rawDispatch(request, options = {}) {
  const body = { jsonrpc: "2.0", id: nextId++, ...request };
  const params = body.params ?? {};
  const headers = new Headers({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION,
    "mcp-method": body.method,
  });
  const name = body.method === "tools/call" ? params.name : params.taskId;
  if (typeof name === "string") headers.set("mcp-name", name);
  // The client's own routing headers (it sets Mcp-Name on tasks/*) win.
  for (const [key, value] of Object.entries(options.context?.headers ?? {})) headers.set(key, value);
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: options.signal,
  });
  const text = await response.text();
  // A streamed answer: the last data line holds the response.
  const message = response.headers.get("content-type")?.includes("text/event-stream")
    ? JSON.parse(
        text
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .filter((l) => l.includes(`"id":${body.id}`))
          .pop() ?? "{}",
      )
    : JSON.parse(text);
  seen.push({ method: body.method, status: message.result?.status, resultType: message.result?.resultType });
  if (message.error) return { kind: "error", error: message.error };
  return { kind: "result", result: message.result };
}

const client = new Client(clientInfo, {
  capabilities: clientCapabilities,
  versionNegotiation: { mode: { pin: PROTOCOL_VERSION } },
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const era = client.getProtocolEra();
if (era !== "modern") fail(`expected the SDK client to speak 2026-07-28 (modern era), found ${era}`);
const extension = client.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/tasks"];
if (!extension) fail("the server does not announce io.modelcontextprotocol/tasks in server/discover");

const session = createTaskSessionFromClient(client, {
  endpointId: "typed-mcp-support-desk",
  rawDispatch,
  v2RequestFraming: { protocolVersion: PROTOCOL_VERSION, clientInfo, clientCapabilities },
});
try {
  const execution = await session.callTool("rebuild_search_index", { batch_size: 1, pause_ms: 300 });
  const { outcome } = await execution.settle();
  const result = resultFromTaskOutcome(outcome);
  const created = seen.find((s) => s.method === "tools/call");
  const polls = seen.filter((s) => s.method === "tasks/get");
  console.log(`tasks-check: tools/call answered resultType=${created?.resultType}; tasks/get polled ${polls.length} time(s): ${polls.map((p) => p.status).join(", ")}`);
  console.log(`tasks-check: result ${JSON.stringify(result)}`);
  if (created?.resultType !== "task") fail("the call did not become a task");
  if (polls.length === 0) fail("the client never polled tasks/get");
  if (polls.at(-1).status !== "completed") fail(`the last poll saw ${polls.at(-1).status}, not completed`);
  const report = result?.structuredContent;
  if (result?.isError || typeof report?.tickets !== "number" || report.tickets < 1 || report.batches !== report.tickets) {
    fail(`expected a reindex report with one batch per ticket, found ${JSON.stringify(result)}`);
  }
  const notified = await followByNotifications();
  console.log(`tasks-check: PASS (${report.tickets} tickets reindexed as a task; a second reindex followed through ${notified} status notification(s))`);
} finally {
  await session.close();
  await client.close();
}

// Starts a reindex as a task, then follows it on a subscriptions/listen
// stream: the acknowledgement must accept its id, and the notifications
// (each a valid ext-tasks TaskStatusNotification) must end with the
// completed task and its report. Returns how many notifications came.
async function followByNotifications() {
  const meta = withTaskCapabilityV2({
    _meta: {
      "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
      "io.modelcontextprotocol/clientCapabilities": clientCapabilities,
      "io.modelcontextprotocol/clientInfo": clientInfo,
    },
  })._meta;
  const started = await rawDispatch({
    method: "tools/call",
    params: { name: "rebuild_search_index", arguments: { batch_size: 1, pause_ms: 200 }, _meta: meta },
  });
  const taskId = started.result?.taskId;
  if (started.result?.resultType !== "task" || typeof taskId !== "string") {
    fail(`the second reindex did not become a task: ${JSON.stringify(started)}`);
  }
  const filter = contributeTaskFilterV2({ notifications: {} }, [taskId]);
  const listen = new AbortController();
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL_VERSION,
      "mcp-method": "subscriptions/listen",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "subscriptions/listen", params: { ...filter, _meta: meta } }),
    signal: listen.signal,
  });
  if (!response.headers.get("content-type")?.includes("text/event-stream")) {
    fail(`subscriptions/listen did not stream: ${response.status} ${await response.text()}`);
  }
  const timer = setTimeout(() => listen.abort(), 30_000);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let acknowledged = false;
  const statuses = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) fail(`the listen stream ended before the task did (saw ${statuses.join(", ")})`);
      buffered += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (!line.startsWith("data:")) continue;
        const message = JSON.parse(line.slice(5));
        if (message.method === "notifications/subscriptions/acknowledged") {
          const accepted = readAcceptedTaskIdsV2(message.params);
          if (!accepted.includes(taskId)) fail(`the acknowledgement did not accept the task: ${JSON.stringify(message)}`);
          acknowledged = true;
          continue;
        }
        if (message.method !== "notifications/tasks") continue;
        if (!acknowledged) fail("a task notification came before the acknowledgement");
        if (!isTaskStatusNotificationV2(message)) fail(`not a valid task status notification: ${JSON.stringify(message)}`);
        if (message.params.taskId !== taskId) fail(`a notification of another task: ${JSON.stringify(message)}`);
        statuses.push(message.params.status);
        if (["failed", "cancelled"].includes(message.params.status)) fail(`the task ended ${message.params.status}: ${JSON.stringify(message)}`);
        if (message.params.status === "completed") {
          const report = message.params.result?.structuredContent;
          if (typeof report?.tickets !== "number" || report.tickets < 1) {
            fail(`the completed notification carries no reindex report: ${JSON.stringify(message)}`);
          }
          console.log(`tasks-check: listen acknowledged ${taskId}; notified: ${statuses.join(", ")}`);
          return statuses.length;
        }
      }
    }
  } finally {
    clearTimeout(timer);
    listen.abort();
  }
}
