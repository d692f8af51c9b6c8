"""What client_e2e.py, desk_e2e.py and legacy_e2e.py share: the protocol
versions, the timeouts, how a check is run, reported and counted, and how the
support desk's receipts file is read.

It imports no MCP SDK: the modern client (mcp 2.x) and the legacy client
(mcp 1.x) run in separate venvs and both import this module.
"""

from __future__ import annotations

import json
import re
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

PROTOCOL = "2026-07-28"
LEGACY_PROTOCOL = "2025-11-25"
LEG_TIMEOUT_S = 60.0
REQUEST_TIMEOUT_S = 10.0

# Receipts are appended as a call ends; a check waits this long for a line.
RECEIPT_WAIT_S = 5.0
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
TRACE_ID = re.compile(r"[0-9a-f]{32}")


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


def text_of(result: Any) -> str:
    """The text of a tool result's first content block, which must be text
    (either SDK's CallToolResult)."""
    content = getattr(result, "content", None)
    if not content or getattr(content[0], "type", None) != "text":
        raise AssertionError(f"content[0] is not text: {content!r}")
    return content[0].text


def read_receipts(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    # Every complete line must be JSON; a line still being written has no newline yet.
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return [json.loads(line) for line in lines if line.endswith("\n")]


def kind_of(receipt: dict[str, Any]) -> Any:
    return receipt.get("outcome", {}).get("kind")


async def wait_for_receipt(path: Path, what: str, matches: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The one receipt in `path` that `matches`, waiting up to RECEIPT_WAIT_S for it."""
    deadline = time.monotonic() + RECEIPT_WAIT_S
    while True:
        receipts = read_receipts(path)
        found = [receipt for receipt in receipts if matches(receipt)]
        if found:
            expect(len(found), 1, f"number of receipts for {what}")
            return found[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"no receipt for {what} in {path} after {RECEIPT_WAIT_S} s; receipts: {receipts!r}")
        await anyio.sleep(0.02)


def expect_receipt_ids(receipt: dict[str, Any]) -> None:
    digest, trace_id = receipt.get("digest"), receipt.get("traceId")
    if not isinstance(digest, str) or not DIGEST.fullmatch(digest):
        raise AssertionError(f"digest is not sha256:<64 hex>: {receipt!r}")
    if not isinstance(trace_id, str) or not TRACE_ID.fullmatch(trace_id) or trace_id == "0" * 32:
        raise AssertionError(f"traceId is not 32 lowercase hex digits (not all zero): {receipt!r}")
