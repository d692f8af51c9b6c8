"""The support desk as an OAuth 2.1 resource server, against a real
authorization server (oidc-provider) and the official Python MCP SDK.

Run by scripts/oauth-check:

    python desk_oauth.py ISSUER DESK_URL RECEIPTS DESK_STDERR OPAQUE_DESK_URL [FILE...]

DESK_URL is a desk checking JWT access tokens, OPAQUE_DESK_URL one checking
opaque tokens by introspection; no token may appear in RECEIPTS, DESK_STDERR
or any FILE.

Prints one line per check and finally `N passed, M failed`; exits non-zero
when any failed.
"""

from __future__ import annotations

import base64
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

PROTOCOL = "2026-07-28"
TIMEOUT_S = 10.0


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    async def run(self, name: str, check: Any) -> None:
        try:
            await check()
        except Exception as error:  # noqa: BLE001 - every failure is reported
            self.failed += 1
            print(f"FAIL {name}: {error}")
            traceback.print_exc(limit=3, file=sys.stdout)
        else:
            self.passed += 1
            print(f"ok   {name}")


def expect(found: Any, expected: Any, what: str) -> None:
    if found != expected:
        raise AssertionError(f"{what}: expected {expected!r}, found {found!r}")


def rpc(method: str, params: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    """A 2026-07-28 request and its standard headers, as a client sends them."""
    name = params.get("name") or params.get("uri")
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": method,
    }
    if name:
        headers["Mcp-Name"] = name
    return headers, json.dumps(body).encode()


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


async def main(issuer: str, url: str, receipts: Path, stderr: Path, opaque_url: str, others: list[Path]) -> int:
    checks = Checks()
    origin = url.rsplit("/mcp", 1)[0]
    metadata_url = f"{origin}/.well-known/oauth-protected-resource/mcp"
    tokens: dict[str, str] = {}
    http = httpx2.AsyncClient(timeout=httpx2.Timeout(TIMEOUT_S))

    async def metadata() -> None:
        response = await http.get(metadata_url)
        expect(response.status_code, 200, "status")
        expect(response.headers.get("content-type"), "application/json", "content-type")
        doc = response.json()
        expect(doc.get("resource"), url, "resource")
        expect(doc.get("authorization_servers"), [issuer], "authorization_servers")
        expect(doc.get("scopes_supported"), ["desk.write"], "scopes_supported")
        expect(doc.get("bearer_methods_supported"), ["header"], "bearer_methods_supported")
        # The authorization server it names is real: its metadata is found.
        found = (await http.get(f"{issuer}/.well-known/openid-configuration")).json()
        expect(found.get("issuer"), issuer, "the authorization server's issuer")

    async def no_token() -> None:
        headers, body = rpc("tools/call", {"name": "close_ticket", "arguments": {"ticket_id": "T-1002", "note": "x"}})
        response = await http.post(url, headers=headers, content=body)
        expect(response.status_code, 401, "status")
        expect(
            response.headers.get("www-authenticate"),
            f'Bearer resource_metadata="{metadata_url}", scope="desk.write"',
            "WWW-Authenticate",
        )

    async def token(client: str, scope: str | None) -> str:
        form = {"grant_type": "client_credentials", "resource": url}
        if scope:
            form["scope"] = scope
        response = await http.post(f"{issuer}/token", data=form, auth=(client, f"{client}-secret"))
        expect(response.status_code, 200, f"token endpoint status ({response.text})")
        access = response.json()["access_token"]
        claims = claims_of(access)
        expect(claims.get("aud"), url, "the token's audience (the resource indicator)")
        expect(claims.get("iss"), issuer, "the token's issuer")
        tokens[client] = access
        return access

    async def tokens_issued() -> None:
        writer = await token("writer", "desk.write")
        expect(claims_of(writer).get("scope"), "desk.write", "the writer token's scope")
        reader = await token("reader", None)
        expect(claims_of(reader).get("scope"), None, "the reader token's scope")

    async def sdk_client(access: str, at: str = url) -> tuple[httpx2.AsyncClient, Client]:
        authed = httpx2.AsyncClient(
            timeout=httpx2.Timeout(TIMEOUT_S), headers={"Authorization": f"Bearer {access}"}
        )
        return authed, Client(streamable_http_client(at, http_client=authed), read_timeout_seconds=TIMEOUT_S)

    async def writer_closes() -> None:
        authed, client = await sdk_client(tokens["writer"])
        async with authed, client:
            tools = [t.name for t in (await client.list_tools()).tools]
            if "close_ticket" not in tools:
                raise AssertionError(f"close_ticket not listed: {tools}")
            found = await client.call_tool("search_tickets", {"query": "refund"})
            expect(found.is_error, False, "search isError")
            closed = await client.call_tool("close_ticket", {"ticket_id": "T-1002", "note": "Refunded."})
            expect(closed.is_error, False, f"close isError ({closed.content!r})")
            expect((closed.structured_content or {}).get("status"), "closed", "status")

    async def reader_reads() -> None:
        authed, client = await sdk_client(tokens["reader"])
        async with authed, client:
            found = await client.call_tool("search_tickets", {"query": "refund"})
            expect(found.is_error, False, "search isError")

    async def reader_challenged() -> None:
        headers, body = rpc("tools/call", {"name": "close_ticket", "arguments": {"ticket_id": "T-1001", "note": "x"}})
        headers["Authorization"] = f"Bearer {tokens['reader']}"
        response = await http.post(url, headers=headers, content=body)
        expect(response.status_code, 403, "status")
        expect(
            response.headers.get("www-authenticate"),
            f'Bearer error="insufficient_scope", scope="desk.write", resource_metadata="{metadata_url}", '
            'error_description="the token lacks the scope desk.write"',
            "WWW-Authenticate",
        )
        expect(response.json()["result"]["isError"], True, "the body is the refusal")

    async def bad_token() -> None:
        forged = tokens["writer"][:-6] + ("AAAAAA" if not tokens["writer"].endswith("AAAAAA") else "BBBBBB")
        headers, body = rpc("tools/list", {})
        headers["Authorization"] = f"Bearer {forged}"
        response = await http.post(url, headers=headers, content=body)
        expect(response.status_code, 401, "status")
        challenge = response.headers.get("www-authenticate", "")
        if not challenge.startswith('Bearer error="invalid_token"'):
            raise AssertionError(f"expected an invalid_token challenge, found {challenge!r}")

    async def opaque_tokens() -> None:
        # The second desk checks tokens by introspection: opaque ones, for its
        # own resource indicator.
        async def opaque(client: str, scope: str | None) -> str:
            form = {"grant_type": "client_credentials", "resource": opaque_url}
            if scope:
                form["scope"] = scope
            response = await http.post(f"{issuer}/token", data=form, auth=(client, f"{client}-secret"))
            expect(response.status_code, 200, f"token endpoint status ({response.text})")
            access = response.json()["access_token"]
            if access.count(".") == 2:
                raise AssertionError("expected an opaque token, found a JWT")
            tokens[f"opaque {client}"] = access
            return access

        writer = await opaque("writer", "desk.write")
        reader = await opaque("reader", None)
        authed, client = await sdk_client(writer, opaque_url)
        async with authed, client:
            closed = await client.call_tool("close_ticket", {"ticket_id": "T-1001", "note": "Refunded."})
            expect(closed.is_error, False, f"close isError ({closed.content!r})")
        headers, body = rpc("tools/call", {"name": "close_ticket", "arguments": {"ticket_id": "T-1002", "note": "x"}})
        headers["Authorization"] = f"Bearer {reader}"
        response = await http.post(opaque_url, headers=headers, content=body)
        expect(response.status_code, 403, "status without desk.write")
        headers["Authorization"] = "Bearer not-a-token-the-server-issued"
        response = await http.post(opaque_url, headers=headers, content=body)
        expect(response.status_code, 401, "status of an unknown token")

    async def receipts_and_logs() -> None:
        deadline = time.monotonic() + 5
        while True:
            lines = [json.loads(l) for l in receipts.read_text().splitlines() if l.strip()]
            closes = [r for r in lines if r.get("name") == "close_ticket"]
            if len(closes) >= 2 or time.monotonic() > deadline:
                break
            await anyio.sleep(0.1)
        outcomes = sorted((r.get("principal"), r["outcome"]["kind"]) for r in closes)
        expect(outcomes, [("reader", "refused"), ("writer", "completed")], "close_ticket receipts")
        seen = "".join(p.read_text() for p in [receipts, stderr, *others])
        for client, access in tokens.items():
            # A JWT's signature alone would be as telling as the whole token.
            if access in seen or access.split(".")[-1] in seen:
                raise AssertionError(f"the {client} token is in a receipt or a log line")

    async with http:
        for name, check in [
            ("metadata document (RFC 9728) at the path-inserted well-known URL", metadata),
            ("no token: 401, resource_metadata and the call's scope", no_token),
            ("oidc-provider issues JWT access tokens for the desk (client credentials, resource indicator)", tokens_issued),
            ("the SDK client with a desk.write token lists, searches and closes T-1002", writer_closes),
            ("the SDK client with a token without scopes searches", reader_reads),
            ("a token without desk.write: 403 insufficient_scope naming desk.write", reader_challenged),
            ("a tampered token: 401 invalid_token", bad_token),
            ("opaque tokens checked by introspection (RFC 7662): close with desk.write, 403 without, 401 unknown", opaque_tokens),
            ("receipts: the refused and the completed close, by principal; no token in receipts or logs", receipts_and_logs),
        ]:
            await checks.run(name, check)
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == "__main__":
    issuer_arg, url_arg, receipts_arg, stderr_arg, opaque_arg = sys.argv[1:6]
    rest = [Path(p) for p in sys.argv[6:]]
    sys.exit(anyio.run(main, issuer_arg, url_arg, Path(receipts_arg), Path(stderr_arg), opaque_arg, rest))
