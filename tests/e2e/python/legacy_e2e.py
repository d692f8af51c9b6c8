"""End-to-end test with a legacy client: the official Python MCP SDK 1.x
(PyPI `mcp`, pinned in requirements-legacy.txt), which speaks only the
session-based revisions up to 2025-11-25, as the client of typed-mcp's
quickstart example and of the support-desk example.

The SDK opens a session with `initialize` and `notifications/initialized`,
then sends plain requests (no `_meta` envelope); over Streamable HTTP it
keeps the `Mcp-Session-Id` the server assigned, sends
`MCP-Protocol-Version: 2025-11-25` after the handshake, and ends the session
with DELETE. The same servers, unchanged, must serve it beside the 2026-07-28
client of client_e2e.py. Only the SDK's public client API is used.

    legacy_e2e.py --http http://127.0.0.1:PORT/mcp   # a quickstart already serving HTTP
    legacy_e2e.py --stdio target/debug/examples/quickstart   # spawned by the SDK
    legacy_e2e.py --desk-http URL RECEIPTS           # a support desk serving HTTP, no grant
    legacy_e2e.py --desk-http-granted URL RECEIPTS   # ... started with --allow desk.write
    legacy_e2e.py --desk-stdio target/debug/support-desk   # spawned twice, with and without
    legacy_e2e.py --fixture-http URL | --fixture-stdio target/debug/fixture-server
                                                     # NeedsInput tools, asked by server requests

The arguments are client_e2e.py's. Prints one line per check and, last,
`legacy_e2e: N passed, M failed`; exits 1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import ClientSession, McpError, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from pydantic import AnyUrl

from e2e_checks import (
    LEG_TIMEOUT_S,
    LEGACY_PROTOCOL,
    REQUEST_TIMEOUT_S,
    Checks,
    expect,
    expect_receipt_ids,
    kind_of,
    text_of,
    wait_for_receipt,
)

QUICKSTART = "typed-mcp-quickstart"
DESK = "support-desk"
WRITE = "desk.write"
CALLER_TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
CALLER_TRACEPARENT = f"00-{CALLER_TRACE_ID}-b7ad6b7169203331-01"
# Fields of 2026-07-28 results that a 2025-11-25 result must not carry.
MODERN_ONLY_RESULT_FIELDS = ("resultType", "ttlMs", "cacheScope")
MODERN_ONLY_META = "io.modelcontextprotocol/serverInfo"

Connected = tuple[ClientSession, types.InitializeResult]


def expect_legacy_shape(result: Any, what: str) -> None:
    """A result of the legacy era: none of 2026-07-28's fields."""
    extra = result.model_extra or {}
    for field in MODERN_ONLY_RESULT_FIELDS:
        if field in extra:
            raise AssertionError(f"{what}: a 2025-11-25 result carries {field}={extra[field]!r}")
    if MODERN_ONLY_META in (result.meta or {}):
        raise AssertionError(f"{what}: a 2025-11-25 result carries _meta[{MODERN_ONLY_META!r}]")


def expect_initialized(init: types.InitializeResult, server_name: str) -> None:
    expect(init.protocolVersion, LEGACY_PROTOCOL, "negotiated protocol version")
    expect(init.serverInfo.name, server_name, "serverInfo name")
    caps = init.capabilities
    if caps.tools is None or caps.resources is None or caps.prompts is None:
        raise AssertionError(f"capabilities lack tools/resources/prompts: {caps!r}")


async def exercise_quickstart(connected: Connected, leg: str, checks: Checks) -> None:
    """The quickstart's checks; the session is initialized already."""
    session, init = connected

    async def initialized() -> None:
        expect_initialized(init, QUICKSTART)
        expect_legacy_shape(init, "initialize")

    async def ping() -> None:
        result = await session.send_ping()
        expect(result.model_dump(exclude_none=True), {}, "ping result")

    async def list_tools() -> None:
        listed = await session.list_tools()
        expect_legacy_shape(listed, "tools/list")
        tools = {tool.name: tool for tool in listed.tools}
        expect(sorted(tools), ["add", "echo"], "tool names")
        add = tools["add"]
        expect(sorted(add.inputSchema.get("required", [])), ["a", "b"], "add: required inputs")
        expect(add.inputSchema["properties"]["a"].get("type"), "integer", "add: type of a")
        if add.outputSchema is None:
            raise AssertionError("add has no outputSchema")
        expect(add.outputSchema["properties"]["sum"].get("type"), "integer", "add: outputSchema sum")
        expect(add.annotations.readOnlyHint if add.annotations else None, True, "add: readOnlyHint")

    async def call_add() -> None:
        result = await session.call_tool("add", {"a": 2, "b": 3})
        expect_legacy_shape(result, "tools/call")
        expect(result.isError, False, "isError")
        expect(result.structuredContent, {"sum": 5}, "structuredContent")
        expect(text_of(result), '{"sum":5}', "text block")

    async def call_echo() -> None:
        text = ' Grüße, "MCP"\n'
        result = await session.call_tool("echo", {"text": text})
        expect(result.isError, False, "isError")
        expect(result.structuredContent, {"result": text}, "structuredContent")
        expect(json.loads(text_of(result)), {"result": text}, "text block, parsed")

    async def bad_argument() -> None:
        # Arguments that do not match the input schema are a tool result with
        # isError the model can read (2025-11-25: input validation errors are
        # tool execution errors), not a JSON-RPC error.
        try:
            result = await session.call_tool("add", {"a": "two", "b": 3})
        except McpError as error:
            raise AssertionError(f"a bad argument was answered as a JSON-RPC error: {error.error!r}") from None
        expect(result.isError, True, "isError")
        message = text_of(result)
        if "a" not in message or "integer" not in message:
            raise AssertionError(f"the error does not say that `a` must be an integer: {message!r}")

    async def overflow() -> None:
        result = await session.call_tool("add", {"a": 2**63 - 1, "b": 1})
        expect(result.isError, True, "isError")
        if "does not fit in 64 bits" not in text_of(result):
            raise AssertionError(f"unexpected error text: {text_of(result)!r}")

    async def read_resource() -> None:
        for name in ("Ada", "Zoë"):
            result = await session.read_resource(AnyUrl(f"quickstart://greeting/{name}"))
            expect_legacy_shape(result, "resources/read")
            expect(len(result.contents), 1, "number of contents")
            expect(getattr(result.contents[0], "text", None), f"Hello, {name}!", f"greeting for {name}")

    async def get_prompt() -> None:
        result = await session.get_prompt("review_code", {"code": "fn main() {}", "focus": "naming"})
        expect_legacy_shape(result, "prompts/get")
        expect(len(result.messages), 1, "number of messages")
        message = result.messages[0]
        expect(message.role, "user", "role")
        text = message.content.text if isinstance(message.content, types.TextContent) else None
        expect(text, "Please review this code. Focus on naming.\n\nfn main() {}", "prompt text")

    for name, check in [
        (f"initialize negotiated {LEGACY_PROTOCOL}", initialized),
        ("ping", ping),
        ("tools/list", list_tools),
        ("tools/call add {a:2,b:3} -> {sum:5}", call_add),
        ("tools/call echo (non-ASCII, quotes, newline)", call_echo),
        ('tools/call add {a:"two"} -> isError, not a JSON-RPC error', bad_argument),
        ("tools/call add overflow -> isError", overflow),
        ("resources/read quickstart://greeting/{Ada,Zoë}", read_resource),
        ("prompts/get review_code", get_prompt),
    ]:
        await checks.run(f"{leg}: {name}", check)


async def read_ticket(session: ClientSession, ticket_id: str) -> dict[str, Any]:
    uri = f"ticket://{ticket_id}"
    result = await session.read_resource(AnyUrl(uri))
    expect(len(result.contents), 1, f"{uri}: number of contents")
    content = result.contents[0]
    expect(str(content.uri), uri, f"{uri}: contents uri")
    expect(content.mimeType, "application/json", f"{uri}: mimeType")
    text = getattr(content, "text", None)
    if not isinstance(text, str):
        raise AssertionError(f"{uri}: not text contents: {content!r}")
    ticket = json.loads(text)
    expect(ticket.get("id"), ticket_id, f"{uri}: id")
    return ticket


async def exercise_desk(connected: Connected, leg: str, receipts: Path, checks: Checks) -> None:
    """Search, a refused close and its receipt, a resource and the prompt, on a desk that grants nothing."""
    session, init = connected

    async def initialized() -> None:
        expect_initialized(init, DESK)

    async def search() -> None:
        result = await session.call_tool("search_tickets", {"query": "refund"})
        expect(result.isError, False, "isError")
        tickets = (result.structuredContent or {}).get("tickets")
        if not isinstance(tickets, list) or not tickets:
            raise AssertionError(f"structuredContent lists no tickets: {result.structuredContent!r}")
        hits = {ticket["id"]: ticket for ticket in tickets}
        if "T-1001" not in hits:
            raise AssertionError(f"T-1001 not among the hits {sorted(hits)}")
        expect(hits["T-1001"]["status"], "open", "T-1001 status")
        expect(json.loads(text_of(result)), result.structuredContent, "text block, parsed")

    async def bad_argument() -> None:
        try:
            result = await session.call_tool("search_tickets", {"query": "refund", "limit": 0})
        except McpError as error:
            raise AssertionError(f"a bad argument was answered as a JSON-RPC error: {error.error!r}") from None
        expect(result.isError, True, "isError")
        if "limit" not in text_of(result):
            raise AssertionError(f"the error does not name `limit`: {text_of(result)!r}")

    async def refused_close() -> None:
        result = await session.call_tool(
            "close_ticket", {"ticket_id": "T-1001", "note": "Refunded."}, meta={"traceparent": CALLER_TRACEPARENT}
        )
        expect(result.isError, True, "isError")
        expect(result.structuredContent, None, "structuredContent")
        text = text_of(result)
        if WRITE not in text or "refused" not in text:
            raise AssertionError(f"the refusal does not name {WRITE}: {text!r}")
        expect((result.meta or {}).get("rs.typed-mcp/missingCapabilities"), [WRITE], "_meta missingCapabilities")

    async def still_open() -> None:
        ticket = await read_ticket(session, "T-1001")
        expect(ticket.get("status"), "open", "T-1001 status after the refused close")

    async def refused_receipt() -> None:
        receipt = await wait_for_receipt(receipts, "the refused close", lambda r: r.get("name") == "close_ticket")
        expect(receipt.get("method"), "tools/call", "method")
        expect(receipt.get("outcome"), {"kind": "refused", "missing": [WRITE]}, "outcome")
        expect(receipt.get("scope"), [], "scope (nothing was allowed)")
        expect_receipt_ids(receipt)
        # The legacy request's _meta.traceparent is the caller's trace context too.
        expect(receipt.get("traceId"), CALLER_TRACE_ID, "traceId (the caller's, from _meta.traceparent)")
        expect(receipt.get("protocolVersion"), LEGACY_PROTOCOL, "protocolVersion (the era the call came in)")

    async def read_unknown() -> None:
        try:
            result = await session.read_resource(AnyUrl("ticket://T-9999"))
        except McpError as error:
            if "ticket://T-9999" not in error.error.message:
                raise AssertionError(f"the error does not name the URI: {error.error!r}") from None
        else:
            raise AssertionError(f"reading ticket://T-9999 succeeded: {result!r}")

    async def triage() -> None:
        result = await session.get_prompt("triage", {"ticket_id": "T-1002"})
        expect(len(result.messages), 1, "number of messages")
        text = getattr(result.messages[0].content, "text", None)
        if not isinstance(text, str) or "Ticket T-1002" not in text or "Charged twice" not in text:
            raise AssertionError(f"the prompt does not quote T-1002: {text!r}")

    for name, check in [
        (f"initialize negotiated {LEGACY_PROTOCOL} with support-desk", initialized),
        ("tools/call search_tickets {query: refund} -> T-1001", search),
        ("tools/call search_tickets {limit: 0} -> isError naming limit", bad_argument),
        ("tools/call close_ticket without desk.write -> isError naming desk.write", refused_close),
        ("resources/read ticket://T-1001 -> still open", still_open),
        (f"receipt: refused, the caller's traceId, era {LEGACY_PROTOCOL}", refused_receipt),
        ("resources/read ticket://T-9999 -> an error naming the URI", read_unknown),
        ("prompts/get triage {ticket_id: T-1002}", triage),
    ]:
        await checks.run(f"{leg}: {name}", check)


async def exercise_desk_granted(connected: Connected, leg: str, receipts: Path, checks: Checks) -> None:
    """Closing T-1001 on a desk run with `--allow desk.write`, and its receipt."""
    session, _ = connected

    async def close() -> None:
        result = await session.call_tool("close_ticket", {"ticket_id": "T-1001", "note": "Refunded."})
        expect(result.isError, False, f"isError ({result.content!r})")
        ticket = result.structuredContent or {}
        expect(ticket.get("status"), "closed", "status")
        expect((await read_ticket(session, "T-1001")).get("status"), "closed", "ticket://T-1001 status")

    async def completed_receipt() -> None:
        receipt = await wait_for_receipt(
            receipts, "the close", lambda r: r.get("name") == "close_ticket" and kind_of(r) == "completed"
        )
        expect(receipt.get("scope"), [WRITE], "scope")
        expect(receipt.get("protocolVersion"), LEGACY_PROTOCOL, "protocolVersion")
        expect_receipt_ids(receipt)

    for name, check in [
        ("tools/call close_ticket T-1001 with desk.write -> closed", close),
        ("receipt: completed, scope desk.write", completed_receipt),
    ]:
        await checks.run(f"{leg}: {name}", check)


@asynccontextmanager
async def http_session(url: str, posts: list[httpx.Request]) -> AsyncIterator[Connected]:
    async def on_request(request: httpx.Request) -> None:
        posts.append(request)

    http = httpx.AsyncClient(event_hooks={"request": [on_request]}, timeout=httpx.Timeout(REQUEST_TIMEOUT_S))
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write, read_timeout_seconds=timedelta(seconds=REQUEST_TIMEOUT_S)) as session:
                yield session, await session.initialize()


@asynccontextmanager
async def stdio_session(binary: str, args: list[str], leg: str, checks: Checks) -> AsyncIterator[Connected]:
    # The server's stderr goes to a file, shown only when a check failed.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        failed_before = checks.failed
        params = StdioServerParameters(command=binary, args=args)
        try:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(
                    read, write, read_timeout_seconds=timedelta(seconds=REQUEST_TIMEOUT_S)
                ) as session:
                    yield session, await session.initialize()
        finally:
            if checks.failed > failed_before or sys.exc_info()[0] is not None:
                errlog.seek(0)
                print(f"--- server stderr ({leg}) ---")
                print(errlog.read(), end="")
                print("--- end ---")


async def wire_check(posts: list[httpx.Request], leg: str, checks: Checks) -> None:
    async def wire() -> None:
        # What the SDK put on the wire: initialize first, then every request on
        # the session the server assigned, and a DELETE that ends it.
        if not posts:
            raise AssertionError("no HTTP request was recorded")
        first = json.loads(posts[0].content)
        expect(first.get("method"), "initialize", "the first request")
        if "mcp-session-id" in posts[0].headers:
            raise AssertionError("initialize carried an Mcp-Session-Id")
        later = posts[1:]
        sessions = {request.headers.get("mcp-session-id") for request in later}
        if len(sessions) != 1 or None in sessions:
            raise AssertionError(f"the requests after initialize carry Mcp-Session-Id {sessions!r}, not one id")
        for request in later:
            expect(request.headers.get("mcp-protocol-version"), LEGACY_PROTOCOL, f"{request.method}: MCP-Protocol-Version")
        if "DELETE" not in {request.method for request in later}:
            raise AssertionError("the session was not ended with DELETE")

    await checks.run(f"{leg}: wire (initialize, one Mcp-Session-Id, DELETE)", wire)


async def http_leg(url: str, leg: str, exercise: Callable[..., Awaitable[None]], checks: Checks, *extra: Any) -> None:
    posts: list[httpx.Request] = []
    async with http_session(url, posts) as connected:
        await exercise(connected, leg, *extra, checks)
    await wire_check(posts, leg, checks)


async def quickstart_stdio_leg(binary: str, checks: Checks) -> None:
    async with stdio_session(binary, ["--stdio"], "legacy stdio", checks) as connected:
        await exercise_quickstart(connected, "legacy stdio", checks)


async def desk_stdio_leg(binary: str, leg: str, *, granted: bool, checks: Checks) -> None:
    """A desk the SDK spawns over stdio, on a fresh database in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="typed-mcp-e2e-legacy-desk.") as directory:
        receipts = Path(directory, "receipts.jsonl")
        args = ["--db", str(Path(directory, "desk.db")), "--receipts", str(receipts)]
        if granted:
            args += ["--allow", WRITE]
        async with stdio_session(binary, args, leg, checks) as connected:
            exercise = exercise_desk_granted if granted else exercise_desk
            await exercise(connected, leg, receipts, checks)


FIXTURE = "typed-mcp-conformance-fixture"


@asynccontextmanager
async def answering_session(streams: Any, asked: list[tuple[str, Any]]) -> AsyncIterator[Connected]:
    """A session whose client answers elicitation and sampling requests, recording them."""

    async def elicit(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(("elicitation", params))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(_context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(("sampling", params))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Paris"), model="e2e", stopReason="endTurn"
        )

    read, write = streams[0], streams[1]
    async with ClientSession(
        read,
        write,
        read_timeout_seconds=timedelta(seconds=REQUEST_TIMEOUT_S),
        elicitation_callback=elicit,
        sampling_callback=sample,
    ) as session:
        yield session, await session.initialize()


async def exercise_needs_input(
    connected: Connected, leg: str, asked: list[tuple[str, Any]], tool_calls: list[Any] | None, checks: Checks
) -> None:
    """The conformance fixture's `Answer::NeedsInput` tools, the same ones
    client_e2e.py answers through input_required and a retry: on a legacy
    session their handlers ask by server-to-client request (`elicitation/create`,
    `sampling/createMessage`) within the one call."""
    session, init = connected

    async def call(tool: str, kind: str, expected_text: str) -> Any:
        asked.clear()
        calls_before = len(tool_calls) if tool_calls is not None else 0
        result = await session.call_tool(tool, {})
        expect_legacy_shape(result, "tools/call")
        expect(result.isError, False, f"isError ({result.content!r})")
        expect(text_of(result), expected_text, "text")
        expect([k for k, _ in asked], [kind], "requests the server sent the client")
        if tool_calls is not None:
            # One call: the question travelled on its response stream, no retry.
            expect(len(tool_calls) - calls_before, 1, "tools/call requests on the wire")
        return asked[0][1]

    async def elicitation() -> None:
        expect(init.serverInfo.name, FIXTURE, "serverInfo name")
        params = await call("test_input_required_result_elicitation", "elicitation", "Hello, Ada!")
        expect(params.message, "What is your name?", "elicitation message")

    async def sampling() -> None:
        params = await call("test_input_required_result_sampling", "sampling", "The model answered: Paris")
        expect(params.maxTokens, 100, "sampling maxTokens")

    for name, check in [
        ("NeedsInput elicitation via elicitation/create", elicitation),
        ("NeedsInput sampling via sampling/createMessage", sampling),
    ]:
        await checks.run(f"{leg}: {name}", check)


async def fixture_http_leg(url: str, checks: Checks) -> None:
    asked: list[tuple[str, Any]] = []
    tool_calls: list[httpx.Request] = []

    async def on_request(request: httpx.Request) -> None:
        if request.method == "POST" and json.loads(request.content).get("method") == "tools/call":
            tool_calls.append(request)

    http = httpx.AsyncClient(event_hooks={"request": [on_request]}, timeout=httpx.Timeout(REQUEST_TIMEOUT_S))
    async with http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with answering_session(streams, asked) as connected:
                await exercise_needs_input(connected, "legacy fixture http", asked, tool_calls, checks)


async def fixture_stdio_leg(binary: str, checks: Checks) -> None:
    asked: list[tuple[str, Any]] = []
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        params = StdioServerParameters(command=binary, args=["--stdio"])
        async with stdio_client(params, errlog=errlog) as streams:
            async with answering_session(streams, asked) as connected:
                await exercise_needs_input(connected, "legacy fixture stdio", asked, None, checks)


async def main(args: argparse.Namespace) -> int:
    checks = Checks()
    legs: list[tuple[str, Callable[[], Awaitable[None]]]] = []
    if args.http:
        legs.append(("legacy http", partial(http_leg, args.http, "legacy http", exercise_quickstart, checks)))
    if args.stdio:
        legs.append(("legacy stdio", partial(quickstart_stdio_leg, args.stdio, checks)))
    for leg, endpoint, exercise in (
        ("legacy desk http", args.desk_http, exercise_desk),
        ("legacy desk http +desk.write", args.desk_http_granted, exercise_desk_granted),
    ):
        if endpoint:
            url, receipts = endpoint
            legs.append((leg, partial(http_leg, url, leg, exercise, checks, Path(receipts))))
    if args.desk_stdio:
        for leg, granted in (("legacy desk stdio", False), ("legacy desk stdio +desk.write", True)):
            legs.append((leg, partial(desk_stdio_leg, args.desk_stdio, leg, granted=granted, checks=checks)))
    if args.fixture_http:
        legs.append(("legacy fixture http", partial(fixture_http_leg, args.fixture_http, checks)))
    if args.fixture_stdio:
        legs.append(("legacy fixture stdio", partial(fixture_stdio_leg, args.fixture_stdio, checks)))
    for leg, run in legs:
        started = time.monotonic()
        try:
            with anyio.fail_after(LEG_TIMEOUT_S):
                await run()
        except Exception:  # noqa: BLE001 - a leg that cannot connect is one failure
            checks.failed += 1
            print(f"FAIL {leg}: the leg itself (connect, initialize, timeout or teardown)", flush=True)
            traceback.print_exc(file=sys.stdout)
        print(f"{leg} leg: {time.monotonic() - started:.2f} s", flush=True)
    print(f"legacy_e2e: {checks.passed} passed, {checks.failed} failed", flush=True)
    return 1 if checks.failed or not legs else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--http", metavar="URL", help="endpoint of a quickstart serving HTTP")
    parser.add_argument("--stdio", metavar="BINARY", help="the quickstart binary, spawned over stdio by the SDK")
    parser.add_argument("--desk-http", nargs=2, metavar=("URL", "RECEIPTS"), help="a support desk serving HTTP, no grant")
    parser.add_argument(
        "--desk-http-granted", nargs=2, metavar=("URL", "RECEIPTS"), help="a support desk with --allow desk.write"
    )
    parser.add_argument("--desk-stdio", metavar="BINARY", help="the support-desk binary, spawned over stdio")
    parser.add_argument("--fixture-http", metavar="URL", help="endpoint of conformance/fixture-server serving HTTP")
    parser.add_argument("--fixture-stdio", metavar="BINARY", help="the fixture-server binary, spawned over stdio")
    sys.exit(anyio.run(main, parser.parse_args()))
