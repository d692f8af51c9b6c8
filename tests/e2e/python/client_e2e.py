"""End-to-end test: the official Python MCP SDK (PyPI `mcp`, pinned in
requirements.txt) as the client of typed-mcp's quickstart example and of the
support-desk example (its checks are in desk_e2e.py).

The SDK is a real third-party peer of protocol 2026-07-28: `Client` probes
`server/discover` (no `initialize`), stamps the `_meta` envelope on every
request and, over HTTP, sends `MCP-Protocol-Version`, `Mcp-Method` and
`Mcp-Name`. Only its public client API is used.

    client_e2e.py --http http://127.0.0.1:PORT/mcp   # a quickstart already serving HTTP
    client_e2e.py --stdio target/debug/examples/quickstart   # spawned by the SDK
    client_e2e.py --desk-http URL RECEIPTS           # a support desk serving HTTP, no grant
    client_e2e.py --desk-http-granted URL RECEIPTS   # ... started with --allow desk.write
    client_e2e.py --desk-stdio target/debug/support-desk   # spawned twice, with and without
    client_e2e.py --fixture-http URL | --fixture-stdio target/debug/fixture-server
                                                     # NeedsInput tools, answered by callbacks

Any of them may be given together; each runs as one leg (--desk-stdio as two).
The script starts no HTTP server (scripts/e2e-python does). Prints one line per
check and, last, `client_e2e: N passed, M failed`; exits 1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from functools import partial

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import desk_e2e
from e2e_checks import LEG_TIMEOUT_S, PROTOCOL, REQUEST_TIMEOUT_S, Checks, expect

SERVER_NAME = "typed-mcp-quickstart"


async def exercise(client: Client, leg: str, checks: Checks) -> None:
    """The checks both legs share; `client` is connected already."""

    async def negotiated() -> None:
        # `Client` in its default mode='auto' probes server/discover and falls back
        # to `initialize` only when the answer is not a modern server's.
        session = client.session
        expect(session.initialize_result, None, "initialize_result (no legacy fallback)")
        discover = session.discover_result
        if discover is None:
            raise AssertionError("no DiscoverResult: the server/discover probe did not succeed")
        if PROTOCOL not in discover.supported_versions:
            raise AssertionError(f"supportedVersions {discover.supported_versions} lacks {PROTOCOL}")
        expect(client.protocol_version, PROTOCOL, "negotiated protocol version")
        info = client.server_info
        expect(info.name if info else None, SERVER_NAME, "serverInfo name")
        caps = client.server_capabilities
        if caps.tools is None or caps.resources is None or caps.prompts is None:
            raise AssertionError(f"capabilities lack tools/resources/prompts: {caps!r}")

    async def list_tools() -> None:
        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        expect(sorted(tools), ["add", "echo"], "tool names")
        add = tools["add"]
        expect(sorted(add.input_schema.get("required", [])), ["a", "b"], "add: required inputs")
        expect(add.input_schema["properties"]["a"].get("type"), "integer", "add: type of a")
        if add.output_schema is None:
            raise AssertionError("add has no outputSchema")
        expect(add.output_schema["properties"]["sum"].get("type"), "integer", "add: outputSchema sum")
        expect(add.annotations.read_only_hint if add.annotations else None, True, "add: readOnlyHint")

    async def call_add() -> None:
        result = await client.call_tool("add", {"a": 2, "b": 3})
        expect(result.is_error, False, "isError")
        expect(result.result_type, "complete", "resultType")
        expect(result.structured_content, {"sum": 5}, "structuredContent")
        expect(len(result.content), 1, "number of content blocks")
        block = result.content[0]
        expect(isinstance(block, types.TextContent), True, f"content[0] is text ({block!r})")
        assert isinstance(block, types.TextContent)
        expect(block.text, '{"sum":5}', "text block")

    async def call_echo() -> None:
        text = " Grüße, \"MCP\"\n"
        result = await client.call_tool("echo", {"text": text})
        expect(result.is_error, False, "isError")
        expect(result.structured_content, {"result": text}, "structuredContent")
        # The text block is structuredContent serialized (spec: tools.mdx, for
        # clients that read only content).
        block = result.content[0]
        expect(isinstance(block, types.TextContent), True, f"content[0] is text ({block!r})")
        assert isinstance(block, types.TextContent)
        expect(json.loads(block.text), {"result": text}, "text block, parsed")

    async def call_add_overflow() -> None:
        # A handler's Err is a tool result with isError, not a protocol error.
        result = await client.call_tool("add", {"a": 2**63 - 1, "b": 1})
        expect(result.is_error, True, "isError")
        block = result.content[0]
        message = block.text if isinstance(block, types.TextContent) else repr(block)
        if "does not fit in 64 bits" not in message:
            raise AssertionError(f"unexpected error text: {message!r}")

    async def read_resource() -> None:
        # Over HTTP the URI travels in the Mcp-Name header too (base64-sentinel
        # encoded by the SDK when it is not plain ASCII).
        for name in ("Ada", "Zoë"):
            result = await client.read_resource(f"quickstart://greeting/{name}")
            contents = result.contents
            expect(len(contents), 1, "number of contents")
            content = contents[0]
            expect(getattr(content, "text", None), f"Hello, {name}!", f"greeting for {name}")

    async def get_prompt() -> None:
        result = await client.get_prompt("review_code", {"code": "fn main() {}", "focus": "naming"})
        expect(len(result.messages), 1, "number of messages")
        message = result.messages[0]
        expect(message.role, "user", "role")
        text = message.content.text if isinstance(message.content, types.TextContent) else None
        expect(text, "Please review this code. Focus on naming.\n\nfn main() {}", "prompt text")

    for name, check in [
        ("server/discover negotiated 2026-07-28", negotiated),
        ("tools/list", list_tools),
        ("tools/call add {a:2,b:3} -> {sum:5}", call_add),
        ("tools/call echo (non-ASCII, quotes, newline)", call_echo),
        ("tools/call add overflow -> isError", call_add_overflow),
        ("resources/read quickstart://greeting/{Ada,Zoë}", read_resource),
        ("prompts/get review_code", get_prompt),
    ]:
        await checks.run(f"{leg}: {name}", check)


async def http_leg(url: str, checks: Checks) -> None:
    posts: list[httpx2.Request] = []
    statuses: list[tuple[str | None, int, str | None]] = []

    async def on_request(request: httpx2.Request) -> None:
        posts.append(request)

    async def on_response(response: httpx2.Response) -> None:
        statuses.append(
            (response.request.headers.get("mcp-method"), response.status_code, response.headers.get("content-type"))
        )

    http = httpx2.AsyncClient(
        event_hooks={"request": [on_request], "response": [on_response]},
        timeout=httpx2.Timeout(REQUEST_TIMEOUT_S),
    )
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
            await exercise(client, "http", checks)

    async def wire() -> None:
        # What the SDK put on the wire, and what came back: the headers of
        # 2026-07-28 on every POST, discover first, no initialize, no session.
        if not posts:
            raise AssertionError("no HTTP request was recorded")
        first = posts[0]
        expect(first.headers.get("mcp-method"), "server/discover", "first request's Mcp-Method")
        for request in posts:
            expect(request.method, "POST", "HTTP method")
            method = request.headers.get("mcp-method")
            if method is None or method == "initialize":
                raise AssertionError(f"request without a modern Mcp-Method: {dict(request.headers)!r}")
            expect(request.headers.get("mcp-protocol-version"), PROTOCOL, f"{method}: MCP-Protocol-Version")
            if method in ("tools/call", "prompts/get", "resources/read"):
                if not request.headers.get("mcp-name"):
                    raise AssertionError(f"{method} without Mcp-Name")
            if "mcp-session-id" in request.headers:
                raise AssertionError(f"{method} carries Mcp-Session-Id on a stateless server")
        for method, status, content_type in statuses:
            expect(status, 200, f"{method}: HTTP status")
            expect((content_type or "").split(";")[0].strip(), "application/json", f"{method}: content type")
        seen = {request.headers.get("mcp-method") for request in posts}
        for method in ("server/discover", "tools/list", "tools/call", "resources/read", "prompts/get"):
            if method not in seen:
                raise AssertionError(f"no {method} request was sent")

    await checks.run("http: wire (headers, statuses, no initialize)", wire)


async def stdio_leg(binary: str, checks: Checks) -> None:
    # The server's stderr goes to a file, shown only when a check failed.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        failed_before = checks.failed
        params = StdioServerParameters(command=binary, args=["--stdio"])
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
            await exercise(client, "stdio", checks)
        if checks.failed > failed_before:
            errlog.seek(0)
            print("--- quickstart stderr (stdio leg) ---")
            print(errlog.read(), end="")
            print("--- end ---")


FIXTURE_NAME = "typed-mcp-conformance-fixture"


async def needs_input_leg(transport: object, leg: str, checks: Checks, tool_calls: list[object] | None) -> None:
    """The conformance fixture's `Answer::NeedsInput` tools, answered through the
    client's callbacks: in 2026-07-28 the server returns `input_required` and the
    SDK retries the call with the answers (two `tools/call` per call over HTTP).
    legacy_e2e.py calls the same tools, whose same handlers then ask by
    server-to-client request."""
    asked: list[tuple[str, object]] = []

    async def elicit(_context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(("elicitation", params))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(_context: object, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(("sampling", params))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Paris"), model="e2e", stop_reason="endTurn"
        )

    async with Client(
        transport, read_timeout_seconds=REQUEST_TIMEOUT_S, elicitation_callback=elicit, sampling_callback=sample
    ) as client:

        async def call(tool: str, kind: str, expected_text: str) -> object:
            asked.clear()
            calls_before = len(tool_calls) if tool_calls is not None else 0
            result = await client.call_tool(tool, {})
            expect(result.is_error, False, f"isError ({result.content!r})")
            expect(result.content[0].text if result.content else None, expected_text, "text")
            expect([k for k, _ in asked], [kind], "input requests the client answered")
            if tool_calls is not None:
                # The first call answered input_required; the retry carried the answer.
                expect(len(tool_calls) - calls_before, 2, "tools/call requests on the wire")
            return asked[0][1]

        async def elicitation() -> None:
            expect(client.server_info.name if client.server_info else None, FIXTURE_NAME, "serverInfo name")
            params = await call("test_input_required_result_elicitation", "elicitation", "Hello, Ada!")
            expect(getattr(params, "message", None), "What is your name?", "elicitation message")

        async def sampling() -> None:
            params = await call("test_input_required_result_sampling", "sampling", "The model answered: Paris")
            expect(params.max_tokens, 100, "sampling maxTokens")

        for name, check in [
            ("NeedsInput elicitation via input_required and a retry", elicitation),
            ("NeedsInput sampling via input_required and a retry", sampling),
        ]:
            await checks.run(f"{leg}: {name}", check)


async def fixture_http_leg(url: str, checks: Checks) -> None:
    tool_calls: list[object] = []

    async def on_request(request: httpx2.Request) -> None:
        if request.headers.get("mcp-method") == "tools/call":
            tool_calls.append(request)

    http = httpx2.AsyncClient(event_hooks={"request": [on_request]}, timeout=httpx2.Timeout(REQUEST_TIMEOUT_S))
    async with http:
        await needs_input_leg(streamable_http_client(url, http_client=http), "fixture http", checks, tool_calls)


async def fixture_stdio_leg(binary: str, checks: Checks) -> None:
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        params = StdioServerParameters(command=binary, args=["--stdio"])
        await needs_input_leg(stdio_client(params, errlog=errlog), "fixture stdio", checks, None)


async def main(args: argparse.Namespace) -> int:
    checks = Checks()
    legs: list[tuple[str, Callable[[], Awaitable[None]]]] = []
    if args.http:
        legs.append(("http", lambda: http_leg(args.http, checks)))
    if args.stdio:
        legs.append(("stdio", lambda: stdio_leg(args.stdio, checks)))
    for leg, endpoint, granted in (
        ("desk http", args.desk_http, False),
        ("desk http +desk.write", args.desk_http_granted, True),
    ):
        if endpoint:
            url, receipts = endpoint
            legs.append((leg, partial(desk_e2e.http_leg, url, receipts, leg, granted=granted, checks=checks)))
    if args.desk_stdio:
        for leg, granted in (("desk stdio", False), ("desk stdio +desk.write", True)):
            legs.append((leg, partial(desk_e2e.stdio_leg, args.desk_stdio, leg, granted=granted, checks=checks)))
    if args.fixture_http:
        legs.append(("fixture http", partial(fixture_http_leg, args.fixture_http, checks)))
    if args.fixture_stdio:
        legs.append(("fixture stdio", partial(fixture_stdio_leg, args.fixture_stdio, checks)))
    for leg, run in legs:
        started = time.monotonic()
        try:
            with anyio.fail_after(LEG_TIMEOUT_S):
                await run()
        except Exception:  # noqa: BLE001 - a leg that cannot connect is one failure
            checks.failed += 1
            print(f"FAIL {leg}: the leg itself (connect, timeout or teardown)", flush=True)
            traceback.print_exc(file=sys.stdout)
        print(f"{leg} leg: {time.monotonic() - started:.2f} s", flush=True)
    print(f"client_e2e: {checks.passed} passed, {checks.failed} failed", flush=True)
    return 1 if checks.failed or not legs else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--http", metavar="URL", help="endpoint of a quickstart serving HTTP, e.g. http://127.0.0.1:8000/mcp"
    )
    parser.add_argument("--stdio", metavar="BINARY", help="the quickstart binary, spawned over stdio by the SDK")
    parser.add_argument(
        "--desk-http",
        nargs=2,
        metavar=("URL", "RECEIPTS"),
        help="endpoint of a support desk serving HTTP without grants, and its --receipts file",
    )
    parser.add_argument(
        "--desk-http-granted",
        nargs=2,
        metavar=("URL", "RECEIPTS"),
        help="endpoint of a support desk serving HTTP with --allow desk.write, and its --receipts file",
    )
    parser.add_argument(
        "--desk-stdio",
        metavar="BINARY",
        help="the support-desk binary, spawned over stdio by the SDK (without, then with desk.write)",
    )
    parser.add_argument("--fixture-http", metavar="URL", help="endpoint of conformance/fixture-server serving HTTP")
    parser.add_argument("--fixture-stdio", metavar="BINARY", help="the fixture-server binary, spawned over stdio")
    sys.exit(anyio.run(main, parser.parse_args()))
