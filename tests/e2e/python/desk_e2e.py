"""The support-desk example (examples/support-desk) driven by the official
Python MCP SDK: search, the desk.write capability refusing and then allowing
`close_ticket`, the receipts the server writes for those calls, the
`ticket://{ticket_id}` template and the `triage` prompt.

Every server starts on a fresh database (the demo tickets T-1001..T-1003, all
open) with `--receipts FILE`. A leg without `--allow desk.write` checks search,
the refused close, the resource and the prompt; a leg with it closes T-1001
twice. client_e2e.py runs the legs (`--desk-http`, `--desk-http-granted`,
`--desk-stdio`); over HTTP, scripts/e2e-python starts the servers.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from e2e_checks import (
    PROTOCOL,
    REQUEST_TIMEOUT_S,
    Checks,
    expect,
    expect_receipt_ids,
    kind_of,
    text_of,
    wait_for_receipt,
)

SERVER_NAME = "support-desk"
WRITE = "desk.write"
# The W3C trace context a caller puts in `_meta`; the receipt must carry its trace id.
CALLER_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_TRACEPARENT = f"00-{CALLER_TRACE_ID}-00f067aa0ba902b7-01"


def server_args(directory: str, *, granted: bool) -> list[str]:
    """A desk's command line (without `--http`): its database and receipts in `directory`."""
    args = ["--db", str(Path(directory, "desk.db")), "--receipts", str(Path(directory, "receipts.jsonl"))]
    return [*args, "--allow", WRITE] if granted else args


async def read_ticket(client: Client, ticket_id: str) -> dict[str, Any]:
    uri = f"ticket://{ticket_id}"
    result = await client.read_resource(uri)
    expect(len(result.contents), 1, f"{uri}: number of contents")
    content = result.contents[0]
    expect(content.uri, uri, f"{uri}: contents uri")
    expect(content.mime_type, "application/json", f"{uri}: mimeType")
    text = getattr(content, "text", None)
    if not isinstance(text, str):
        raise AssertionError(f"{uri}: not text contents: {content!r}")
    ticket = json.loads(text)
    expect(ticket.get("id"), ticket_id, f"{uri}: id")
    return ticket


async def exercise_without_grant(client: Client, leg: str, receipts: Path, checks: Checks) -> None:
    """Search, a refused close, the resource and the prompt, on a desk that grants nothing."""

    async def negotiated() -> None:
        expect(client.protocol_version, PROTOCOL, "negotiated protocol version")
        info = client.server_info
        expect(info.name if info else None, SERVER_NAME, "serverInfo name")

    async def search() -> None:
        result = await client.call_tool("search_tickets", {"query": "refund"})
        expect(result.is_error, False, "isError")
        tickets = (result.structured_content or {}).get("tickets")
        if not isinstance(tickets, list) or not tickets:
            raise AssertionError(f"structuredContent lists no tickets: {result.structured_content!r}")
        hits = {ticket["id"]: ticket for ticket in tickets}
        if "T-1001" not in hits:
            raise AssertionError(f"T-1001 not among the hits {sorted(hits)}")
        expect(hits["T-1001"]["status"], "open", "T-1001 status")
        if "[refund]" not in hits["T-1001"]["snippet"]:
            raise AssertionError(f"the snippet does not mark the match: {hits['T-1001']['snippet']!r}")
        # The text block is structuredContent serialized.
        expect(json.loads(text_of(result)), result.structured_content, "text block, parsed")

    async def refused_close() -> None:
        result = await client.call_tool("close_ticket", {"ticket_id": "T-1001", "note": "Refunded."})
        # A refusal is a tool result with isError (the model can read it), not a protocol error.
        expect(result.is_error, True, "isError")
        expect(result.structured_content, None, "structuredContent")
        text = text_of(result)
        if WRITE not in text or "refused" not in text:
            raise AssertionError(f"the refusal does not name {WRITE}: {text!r}")
        expect((result.meta or {}).get("rs.typed-mcp/missingCapabilities"), [WRITE], "_meta missingCapabilities")

    async def still_open() -> None:
        ticket = await read_ticket(client, "T-1001")
        expect(ticket.get("status"), "open", "T-1001 status after the refused close")
        expect(ticket.get("resolution"), None, "T-1001 resolution")

    async def refused_receipt() -> None:
        receipt = await wait_for_receipt(receipts, "the refused close", lambda r: r.get("name") == "close_ticket")
        expect(receipt.get("method"), "tools/call", "method")
        expect(receipt.get("outcome"), {"kind": "refused", "missing": [WRITE]}, "outcome")
        expect(receipt.get("scope"), [], "scope (nothing was allowed)")
        expect(receipt.get("protocolVersion"), PROTOCOL, "protocolVersion (the era the call came in)")
        expect_receipt_ids(receipt)

    async def template() -> None:
        listed = await client.list_resource_templates()
        templates = {t.uri_template: t for t in listed.resource_templates}
        if "ticket://{ticket_id}" not in templates:
            raise AssertionError(f"ticket://{{ticket_id}} not among {sorted(templates)}")
        ticket = templates["ticket://{ticket_id}"]
        expect(ticket.name, "ticket", "template name")
        expect(ticket.mime_type, "application/json", "template mimeType")

    async def read_t1002() -> None:
        ticket = await read_ticket(client, "T-1002")
        expect(ticket.get("title"), "Charged twice for the November invoice", "T-1002 title")
        expect(ticket.get("status"), "open", "T-1002 status")
        expect(ticket.get("comments"), [], "T-1002 comments")

    async def read_unknown() -> None:
        try:
            result = await client.read_resource("ticket://T-9999")
        except MCPError as error:
            expect(error.code, -32602, "error code of a resource not found")
            if "ticket://T-9999" not in error.message:
                raise AssertionError(f"the error does not name the URI: {error.message!r}") from None
        else:
            raise AssertionError(f"reading ticket://T-9999 succeeded: {result!r}")

    async def triage() -> None:
        result = await client.get_prompt("triage", {"ticket_id": "T-1002"})
        expect(len(result.messages), 1, "number of messages")
        message = result.messages[0]
        expect(message.role, "user", "role")
        text = getattr(message.content, "text", None)
        if not isinstance(text, str) or "Ticket T-1002" not in text or "Charged twice" not in text:
            raise AssertionError(f"the prompt does not quote T-1002: {text!r}")

    for name, check in [
        ("server/discover negotiated 2026-07-28 with support-desk", negotiated),
        ("tools/call search_tickets {query: refund} -> T-1001", search),
        ("tools/call close_ticket without desk.write -> isError naming desk.write", refused_close),
        ("resources/read ticket://T-1001 -> still open", still_open),
        ("receipt: refused, sha256 digest, 32-hex traceId, era 2026-07-28", refused_receipt),
        ("resources/templates/list has ticket://{ticket_id}", template),
        ("resources/read ticket://T-1002 -> JSON", read_t1002),
        ("resources/read ticket://T-9999 -> -32602", read_unknown),
        ("prompts/get triage {ticket_id: T-1002}", triage),
    ]:
        await checks.run(f"{leg}: {name}", check)


async def exercise_with_grant(client: Client, leg: str, receipts: Path, checks: Checks) -> None:
    """Closing T-1001, then closing it again, on a desk run with `--allow desk.write`."""

    async def close() -> None:
        result = await client.call_tool("close_ticket", {"ticket_id": "T-1001", "note": "Refunded."})
        expect(result.is_error, False, f"isError ({result.content!r})")
        ticket = result.structured_content or {}
        expect(ticket.get("id"), "T-1001", "id")
        expect(ticket.get("status"), "closed", "status")
        expect(ticket.get("resolution"), "Refunded.", "resolution")
        expect((await read_ticket(client, "T-1001")).get("status"), "closed", "ticket://T-1001 status")

    async def close_again() -> None:
        # With the caller's trace context in _meta: the receipt must carry its trace id.
        result = await client.call_tool(
            "close_ticket",
            {"ticket_id": "T-1001", "note": "Twice."},
            meta={"traceparent": CALLER_TRACEPARENT},
        )
        expect(result.is_error, True, "isError")
        text = text_of(result)
        if "already closed" not in text:
            raise AssertionError(f"unexpected error text: {text!r}")

    async def failed_receipt() -> None:
        receipt = await wait_for_receipt(receipts, "the second close", lambda r: kind_of(r) == "failed")
        expect(receipt.get("name"), "close_ticket", "name")
        expect(receipt.get("outcome", {}).get("variant"), "AlreadyClosed", "outcome variant")
        expect(receipt.get("scope"), [WRITE], "scope")
        expect_receipt_ids(receipt)
        expect(receipt.get("traceId"), CALLER_TRACE_ID, "traceId (the caller's, from _meta.traceparent)")
        completed = await wait_for_receipt(
            receipts, "the first close", lambda r: r.get("name") == "close_ticket" and kind_of(r) == "completed"
        )
        expect(completed.get("digest"), receipt.get("digest"), "digest of the same declaration")

    for name, check in [
        ("tools/call close_ticket T-1001 with desk.write -> closed", close),
        ("tools/call close_ticket T-1001 again -> isError already closed", close_again),
        ("receipt: failed, AlreadyClosed, the caller's traceId", failed_receipt),
    ]:
        await checks.run(f"{leg}: {name}", check)


async def http_leg(url: str, receipts: str, leg: str, *, granted: bool, checks: Checks) -> None:
    """A desk scripts/e2e-python started with `--http` (and `--allow desk.write` if `granted`)."""
    http = httpx2.AsyncClient(timeout=httpx2.Timeout(REQUEST_TIMEOUT_S))
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
            exercise = exercise_with_grant if granted else exercise_without_grant
            await exercise(client, leg, Path(receipts), checks)


async def stdio_leg(binary: str, leg: str, *, granted: bool, checks: Checks) -> None:
    """A desk the SDK spawns over stdio, on a fresh database in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="typed-mcp-e2e-desk.") as directory:
        # The server's stderr goes to a file, shown only when a check failed.
        with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
            failed_before = checks.failed
            params = StdioServerParameters(command=binary, args=server_args(directory, granted=granted))
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
                exercise = exercise_with_grant if granted else exercise_without_grant
                await exercise(client, leg, Path(directory, "receipts.jsonl"), checks)
            if checks.failed > failed_before:
                errlog.seek(0)
                print(f"--- support-desk stderr ({leg}) ---")
                print(errlog.read(), end="")
                print("--- end ---")
