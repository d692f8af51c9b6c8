"""What client_e2e.py and desk_e2e.py share: the protocol version, the
timeouts, and how a check is run, reported and counted."""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types

PROTOCOL = "2026-07-28"
LEG_TIMEOUT_S = 60.0
REQUEST_TIMEOUT_S = 10.0


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    async def run(self, name: str, check: Callable[[], Awaitable[None]]) -> None:
        started = time.monotonic()
        try:
            await check()
        except Exception:  # noqa: BLE001 - every failure is reported, then counted
            self.failed += 1
            print(f"FAIL {name}", flush=True)
            traceback.print_exc(file=sys.stdout)
        else:
            self.passed += 1
            print(f"ok   {name} ({(time.monotonic() - started) * 1000:.0f} ms)", flush=True)


def expect(actual: Any, expected: Any, what: str) -> None:
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def text_of(result: types.CallToolResult) -> str:
    """The text of a tool result's first content block, which must be text."""
    if not result.content or not isinstance(result.content[0], types.TextContent):
        raise AssertionError(f"content[0] is not text: {result.content!r}")
    return result.content[0].text
