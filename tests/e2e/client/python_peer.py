"""A third-party MCP server for typed-mcp-client's peer tests: the official
Python SDK's MCPServer (PyPI `mcp`, pinned in tests/e2e/python/requirements.txt),
which speaks 2026-07-28 and the dated revisions. Its tools ask for input
through resolvers (elicitation and sampling): on 2026-07-28 as an
InputRequiredResult, on a dated session as server-to-client requests.

    python python_peer.py              # stdio
    python python_peer.py --http PORT  # Streamable HTTP at /mcp

A dated session may also subscribe to resources (resources/subscribe, which
MCPServer leaves to the low-level server) and have `touch` announce an update
of one it subscribed to.
"""

import sys
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample
from mcp_types import (
    CreateMessageResult,
    EmptyResult,
    SamplingMessage,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel

mcp = MCPServer("python-peer", instructions="A Python peer for typed-mcp-client.")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@mcp.tool()
def greet(name: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greet someone, asking for their name first."""
    return f"Hello, {name.name}!"


def ask_model() -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text="Capital of France?"))],
        max_tokens=20,
    )


@mcp.tool()
def capital(answer: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Ask the client's model for a capital."""
    return f"the model said {answer.content.text}"


@mcp.tool()
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, "counting")
    await ctx.info(f"counted to {n}")
    return f"counted to {n}"


@mcp.resource("peer://readme")
def readme() -> str:
    """The peer's readme."""
    return "A Python peer."


# The URIs this process's dated sessions subscribed to (one client at a time).
subscribed: set[str] = set()


async def subscribe(_ctx, params: SubscribeRequestParams) -> EmptyResult:
    subscribed.add(str(params.uri))
    return EmptyResult()


async def unsubscribe(_ctx, params: UnsubscribeRequestParams) -> EmptyResult:
    subscribed.discard(str(params.uri))
    return EmptyResult()


mcp._lowlevel_server.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
mcp._lowlevel_server.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)


@mcp.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Announce an update of a resource, when a dated session subscribed to it."""
    if uri not in subscribed:
        return f"{uri} is not subscribed"
    # No related request: over Streamable HTTP it goes on the session's GET stream.
    await ctx.session.send_resource_updated(uri)
    return f"{uri} updated"


@mcp.prompt()
def review(code: str) -> str:
    """Review some code."""
    return f"Review this code: {code}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run()
