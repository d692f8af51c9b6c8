"""A legacy-only MCP server (the Python SDK pinned in requirements.txt, which
speaks dated revisions up to 2025-11-25) for the CLI's era tests: three tools
(one reports progress and logs, one pings the client), a resource, a resource
template and a prompt.

    python server.py                    stdio
    python server.py --http             Streamable HTTP on a free loopback port,
                                        sessions, answers as event streams
    python server.py --http --json      the same, answers as application/json

Over HTTP the first line on stderr is `serving MCP at http://127.0.0.1:PORT/mcp`,
and every HTTP exchange is then logged to stderr as one line, so a test can
assert what the client sent:

    wire: POST rpc=tools/list meta=no session=ID version=2025-11-25 mcp-method=- -> 200

(`rpc` is the JSON-RPC method, or `response`; `meta` says whether its params
carry `_meta`; the rest are the request's headers, `-` when absent.)
"""

import json
import logging
import socket
import sys

import mcp.types as types
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.message import ServerMessageMetadata

# The SDK's info lines ("Processing request ...") would bury the wire log.
logging.disable(logging.INFO)
json_response = "--json" in sys.argv
app = FastMCP(
    "legacy-peer",
    instructions="A legacy-only server for the typed-mcp CLI tests.",
    json_response=json_response,
)


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
async def count(to: int, ctx: Context) -> int:
    """Count from 1, reporting progress at each step and logging when done."""
    for step in range(1, to + 1):
        await ctx.report_progress(step, to, "counting")
    await ctx.info(f"counted to {to}")
    return to


@app.tool()
async def ping_client(ctx: Context) -> str:
    """Ping the client from inside this call, and say that it answered."""
    # Related to this call, so over HTTP it goes on this request's stream.
    await ctx.session.send_request(
        types.ServerRequest(types.PingRequest(method="ping")),
        types.EmptyResult,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )
    return "the client answered the ping"


@app.resource("legacy://readme", mime_type="text/plain")
def readme() -> str:
    """What this server is."""
    return "A legacy peer."


@app.resource("legacy://greeting/{name}", mime_type="text/plain")
def greeting(name: str) -> str:
    """A greeting for someone."""
    return f"Hello, {name}!"


@app.prompt()
def review(code: str) -> str:
    """Review a piece of code."""
    return f"Please review:\n{code}"


def logged(inner):
    """The ASGI app, logging each HTTP exchange (see the module's doc)."""

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return await inner(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        body = b"".join(m.get("body", b"") for m in chunks)
        rpc, meta = "-", "no"
        if body:
            try:
                parsed = json.loads(body)
                rpc = parsed.get("method", "response")
                params = parsed.get("params") or {}
                meta = "yes" if "_meta" in params else "no"
            except (ValueError, AttributeError):
                rpc = "not-json"
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        replay = list(chunks)

        async def replayed():
            return replay.pop(0) if replay else await receive()

        status = {}

        async def sent(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                line = (
                    f"wire: {scope['method']} rpc={rpc} meta={meta}"
                    f" session={headers.get('mcp-session-id', '-')}"
                    f" version={headers.get('mcp-protocol-version', '-')}"
                    f" mcp-method={headers.get('mcp-method', '-')} -> {message['status']}"
                )
                print(line, file=sys.stderr, flush=True)
            await send(message)

        await inner(scope, replayed, sent)

    return app


def serve_http() -> None:
    import anyio
    import uvicorn

    # The port is the OS's pick, bound here so it can be printed before serving.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue until uvicorn accepts them
    port = sock.getsockname()[1]
    config = uvicorn.Config(logged(app.streamable_http_app()), log_level="warning")
    server = uvicorn.Server(config)
    print(f"serving MCP at http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    anyio.run(lambda: server.serve(sockets=[sock]))


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http()
    else:
        app.run("stdio")
