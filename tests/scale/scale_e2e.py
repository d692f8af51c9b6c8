"""Three replicas behind nginx (round robin, no stickiness), sharing Redis:
the checks of scripts/scale-check. Every request goes through nginx; the
`X-Upstream` header nginx adds names the replica that answered.

    python scale_e2e.py DEPLOY_DIR

DEPLOY_DIR is a deployment `deploy/run start` made (its `env` file names the
ports and pids); the checks restart its Redis and kill one of its replicas
(last). Prints one line per check and `scale-check: N passed, M failed`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

VERSION = "2026-07-28"
ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "run"
WAIT_S = 10.0


def read_env(directory: Path) -> dict[str, str]:
    env = {}
    for line in (directory / "env").read_text().splitlines():
        key, _, value = line.partition("=")
        env[key] = value.strip('"')
    return env


class Deployment:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        env = read_env(directory)
        self.url = f"http://127.0.0.1:{env['NGINX_PORT']}/mcp"
        ports = env["REPLICA_PORTS"].split()
        self.replica_of = {f"127.0.0.1:{port}": f"r{n + 1}" for n, port in enumerate(ports)}

    def replica(self, response: httpx.Response) -> str:
        # After a retry nginx lists every upstream tried; the last answered.
        upstream = response.headers.get("x-upstream", "").split(",")[-1].strip()
        return self.replica_of.get(upstream, f"unknown upstream {upstream!r}")

    def run(self, *args: str) -> None:
        subprocess.run([str(DEPLOY), *args], check=True, stdout=subprocess.DEVNULL)


def headers(method: str, name: str | None = None) -> dict[str, str]:
    h = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if name is not None:
        h["Mcp-Name"] = name
    return h


META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def call_body(id_: int, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    params = {"_meta": META, "name": name, "arguments": arguments, **extra}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def expect(actual: Any, expected: Any, what: str) -> None:
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def structured(reply: dict[str, Any]) -> Any:
    if "result" not in reply:
        raise AssertionError(f"expected a result, got {reply!r}")
    result = reply["result"]
    if result.get("isError"):
        raise AssertionError(f"expected a successful call, got isError: {result!r}")
    value = result.get("structuredContent")
    if isinstance(value, dict) and set(value) == {"result"}:
        return value["result"]
    return value


async def call(client: httpx.AsyncClient, d: Deployment, id_: int, name: str, arguments: dict[str, Any], **extra: Any) -> tuple[dict[str, Any], str]:
    response = await client.post(d.url, headers=headers("tools/call", name), json=call_body(id_, name, arguments, **extra))
    expect(response.status_code, 200, f"HTTP status of {name}")
    return response.json(), d.replica(response)


class Listener:
    """One `subscriptions/listen` stream through nginx."""

    def __init__(self, client: httpx.AsyncClient, d: Deployment, id_: int, uris: list[str]) -> None:
        self.client, self.d, self.id, self.uris = client, d, id_, uris
        self.updates: asyncio.Queue[str] = asyncio.Queue()
        self.acknowledged = asyncio.Event()
        self.replica = ""
        self.task: asyncio.Task[None] | None = None
        self.error: BaseException | None = None

    async def open(self) -> None:
        self.task = asyncio.create_task(self._read())
        try:
            await asyncio.wait_for(self.acknowledged.wait(), WAIT_S)
        except TimeoutError:
            raise AssertionError(f"listener {self.id} was not acknowledged within {WAIT_S} s (error: {self.error!r})")

    async def _read(self) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": self.id,
            "method": "subscriptions/listen",
            "params": {"_meta": META, "notifications": {"resourceSubscriptions": self.uris}},
        }
        try:
            async with self.client.stream("POST", self.d.url, headers=headers("subscriptions/listen"), json=body, timeout=None) as response:
                self.replica = self.d.replica(response)
                expect(response.status_code, 200, "HTTP status of subscriptions/listen")
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    message = json.loads(line[5:])
                    method = message.get("method")
                    if method == "notifications/subscriptions/acknowledged":
                        self.acknowledged.set()
                    elif method == "notifications/resources/updated":
                        await self.updates.put(message["params"]["uri"])
        except BaseException as e:  # noqa: BLE001 - reported by open() or next()
            self.error = e
            raise

    async def next(self, what: str) -> str:
        try:
            return await asyncio.wait_for(self.updates.get(), WAIT_S)
        except TimeoutError:
            raise AssertionError(f"listener {self.id} on {self.replica}: no update within {WAIT_S} s, waiting for {what} (error: {self.error!r})")

    def pending(self) -> list[str]:
        seen = []
        while not self.updates.empty():
            seen.append(self.updates.get_nowait())
        return seen

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            try:
                await self.task
            except BaseException:  # noqa: BLE001 - cancelled on purpose
                pass


class Checks:
    def __init__(self, d: Deployment) -> None:
        self.d = d
        self.passed = 0
        self.failed = 0
        self.listeners: list[Listener] = []

    async def run(self, name: str, check: Any) -> None:
        started = time.monotonic()
        try:
            await check()
        except Exception as e:  # noqa: BLE001 - every failure is reported
            self.failed += 1
            print(f"scale-check: FAIL {name}: {type(e).__name__}: {e}", flush=True)
        else:
            self.passed += 1
            print(f"scale-check: ok   {name} ({time.monotonic() - started:.1f} s)", flush=True)

    async def mrtr_across_replicas(self) -> None:
        """input_required from one replica, the retry with its requestState
        served by another."""
        async with httpx.AsyncClient(timeout=WAIT_S) as client:
            reply, first = await call(client, self.d, 1, "two_questions", {})
            result = reply["result"]
            expect(result.get("resultType"), "input_required", "first round's resultType")
            answers = [("first", "Ada"), ("second", "teal")]
            hops = [first]
            for key, text in answers:
                retry = {"inputResponses": {key: {"action": "accept", "content": {"answer": text}}}, "requestState": result["requestState"]}
                reply, served = await call(client, self.d, 2, "two_questions", {}, **retry)
                if "result" not in reply:
                    raise AssertionError(f"the retry on {served} of a requestState sealed on {hops[-1]} was refused: {reply!r}")
                result = reply["result"]
                hops.append(served)
            expect(result.get("resultType"), "complete", "last round's resultType")
            crossed = [(a, b) for a, b in zip(hops, hops[1:]) if a != b]
            if not crossed:
                raise AssertionError(f"every round landed on one replica ({hops}): round robin should have spread them")
            text = structured(reply)
            expect(text, f"Ada likes teal; rounds served by {', '.join(hops)}", "the answer (each round names its replica)")
            # A tampered state is refused on any replica, which still serves.
            bad = {"inputResponses": {"first": {"action": "accept", "content": {"answer": "x"}}}, "requestState": result.get("requestState", "AAAA") + "x"}
            reply, _ = await call(client, self.d, 3, "two_questions", {}, **bad)
            if "error" not in reply:
                raise AssertionError(f"a forged requestState was accepted: {reply!r}")
            reply, _ = await call(client, self.d, 4, "whoami", {})
            structured(reply)

    async def listen_on_every_replica(self) -> None:
        """A listener on each replica; an update published by a call landing
        on a fourth connection's replica reaches all three, and nothing
        else arrives."""
        client = httpx.AsyncClient(timeout=httpx.Timeout(WAIT_S, read=None))
        self.client = client
        subscriptions = [["note://a"], ["note://a"], ["note://a", "note://b"]]
        for n, uris in enumerate(subscriptions):
            listener = Listener(client, self.d, 100 + n, uris)
            await listener.open()
            self.listeners.append(listener)
        on = sorted(l.replica for l in self.listeners)
        expect(on, ["r1", "r2", "r3"], "the replicas the three listeners landed on")
        async with httpx.AsyncClient(timeout=WAIT_S) as caller:
            # note://c concerns nobody; note://a everyone; note://b the third.
            published_on = []
            for name in ["c", "a", "b"]:
                reply, served = await call(caller, self.d, 5, "touch", {"name": name})
                expect(structured(reply), served, "touch answers the replica that served it")
                published_on.append(served)
        # Every replica delivers the channel's order, which for updates
        # published on different replicas need not be the calls' order: a
        # replica answers a call before its queue reaches Redis, so under
        # load the update of the later call can be published first. The
        # third listener takes both, in whichever order Redis has them.
        for listener in self.listeners[:2]:
            expect(await listener.next("note://a"), "note://a", f"the update on {listener.replica}")
        third = self.listeners[2]
        both = [await third.next(f"update {n} of 2") for n in (1, 2)]
        expect(sorted(both), ["note://a", "note://b"], f"the updates on {third.replica}")
        await asyncio.sleep(0.3)
        for listener in self.listeners:
            expect(listener.pending(), [], f"updates nobody published to {listener.replica}'s listener ({listener.uris})")
        if len(set(published_on)) < 2:
            raise AssertionError(f"every publish landed on one replica: {published_on}")

    async def redis_restart(self) -> None:
        """Redis restarted under open listeners: each is resynchronized (its
        URIs announced once again, nothing else), and serving continues."""
        if len(self.listeners) != 3:
            raise AssertionError("needs the three listeners of the previous check")
        self.d.run("restart-redis", str(self.d.dir))
        for listener in self.listeners:
            seen = [await listener.next(f"the resync of {uri}") for uri in listener.uris]
            expect(sorted(seen), sorted(listener.uris), f"resync on {listener.replica}")
        await asyncio.sleep(0.5)
        for listener in self.listeners:
            expect(listener.pending(), [], f"more than one resync on {listener.replica}")
        # Serving continues, and updates cross replicas again.
        async with httpx.AsyncClient(timeout=WAIT_S) as caller:
            reply, _ = await call(caller, self.d, 6, "touch", {"name": "a"})
            structured(reply)
        for listener in self.listeners:
            expect(await listener.next("note://a after the restart"), "note://a", f"update after the restart on {listener.replica}")
        for listener in self.listeners:
            await listener.close()
        await self.client.aclose()

    async def task_across_replicas(self) -> None:
        """A task created on one replica is polled, answered, cancelled and
        collected through the others."""
        tasks = "io.modelcontextprotocol/tasks"
        meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {tasks: {}}}}

        async def request(client: httpx.AsyncClient, id_: int, method: str, params: dict[str, Any], name: str | None = None) -> tuple[dict[str, Any], str]:
            body = {"jsonrpc": "2.0", "id": id_, "method": method, "params": {"_meta": meta, **params}}
            response = await client.post(self.d.url, headers=headers(method, name), json=body)
            expect(response.status_code, 200, f"HTTP status of {method} ({response.text[:300]})")
            return response.json(), self.d.replica(response)

        async def until(client: httpx.AsyncClient, task_id: str, wanted: str, served: list[str]) -> dict[str, Any]:
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline:
                reply, on = await request(client, 9, "tasks/get", {"taskId": task_id}, task_id)
                served.append(on)
                if "result" not in reply:
                    raise AssertionError(f"tasks/get on {on} of a task it did not create: {reply!r}")
                if reply["result"]["status"] == wanted:
                    return reply["result"]
                if reply["result"]["status"] in ("failed", "cancelled"):
                    raise AssertionError(f"the task ended {reply['result']['status']}: {reply!r}")
                await asyncio.sleep(0.1)
            raise AssertionError(f"task {task_id} did not become {wanted} within {WAIT_S} s (polled on {served})")

        async with httpx.AsyncClient(timeout=WAIT_S) as client:
            reply, created_on = await request(client, 7, "tools/call", {"name": "slow_sum", "arguments": {"a": 2, "b": 3, "millis": 1500}}, "slow_sum")
            handle = reply.get("result", {})
            expect(handle.get("resultType"), "task", f"slow_sum's answer ({reply!r})")
            served: list[str] = []
            done = await until(client, handle["taskId"], "completed", served)
            expect(structured({"result": done["result"]}), f"5 computed on {created_on}", "the task's result (it ran where it was created)")
            elsewhere = [on for on in served if on != created_on]
            if not elsewhere:
                raise AssertionError(f"every poll landed on {created_on}: {served}")
            # Input through another replica: the runner takes it from Redis.
            reply, asked_on = await request(client, 8, "tools/call", {"name": "confirm", "arguments": {}}, "confirm")
            task_id = reply["result"]["taskId"]
            served = []
            waiting = await until(client, task_id, "input_required", served)
            expect(list(waiting["inputRequests"]), ["confirm"], "the task's input requests")
            answer = {"confirm": {"action": "accept", "content": {"answer": "yes"}}}
            ack, answered_on = await request(client, 10, "tasks/update", {"taskId": task_id, "inputResponses": answer}, task_id)
            if "result" not in ack:
                raise AssertionError(f"tasks/update on {answered_on} was refused: {ack!r}")
            done = await until(client, task_id, "completed", served)
            expect(structured({"result": done["result"]}), f"yes, confirmed on {asked_on}", "the answered task's result")
            print(f"scale-check:      tasks created on {created_on} and {asked_on}, answered on {answered_on}, polled on {sorted(set(served))}", flush=True)
            if {asked_on, answered_on, *served} == {asked_on}:
                raise AssertionError("the answered task never left its replica")
            # Cancelled through another replica than the one running it: a
            # long slow_sum, then (round robin, nothing else in flight) the
            # request after one that landed on its runner goes elsewhere.
            reply, running_on = await request(client, 11, "tools/call", {"name": "slow_sum", "arguments": {"a": 1, "b": 1, "millis": 60000}}, "slow_sum")
            task_id = reply["result"]["taskId"]
            for _ in range(10):
                _, on = await request(client, 12, "tasks/get", {"taskId": task_id}, task_id)
                if on == running_on:
                    break
            ack, cancelled_on = await request(client, 13, "tasks/cancel", {"taskId": task_id}, task_id)
            expect(ack.get("result", {}).get("resultType"), "complete", f"tasks/cancel's ack ({ack!r})")
            if cancelled_on == running_on:
                raise AssertionError(f"the cancel landed on the running replica {running_on} (round robin expected another)")
            served = []
            await until(client, task_id, "cancelled", served)
            for _ in range(4):
                reply, on = await request(client, 14, "tasks/get", {"taskId": task_id}, task_id)
                served.append(on)
                expect(reply["result"]["status"], "cancelled", f"the cancelled task as {on} reports it")
            if running_on not in served or len(set(served)) < 2:
                raise AssertionError(f"the cancelled task was not polled on its runner and another replica: {served}")
            print(f"scale-check:      a task running on {running_on} cancelled through {cancelled_on}, reported cancelled by {sorted(set(served))}", flush=True)

    async def legacy_session_spread(self) -> None:
        """A dated client (mcp 1.30.0, 2025-11-25, a session) lists and
        calls with its requests spread over the replicas."""
        from mcp import ClientSession, types
        from mcp.client.streamable_http import streamablehttp_client

        answers = iter(["Ada", "teal"])
        asked: list[str] = []

        async def elicit(_context: Any, params: Any) -> Any:
            asked.append(params.message)
            return types.ElicitResult(action="accept", content={"answer": next(answers)})

        async with streamablehttp_client(self.d.url) as (read, write, _):
            async with ClientSession(read, write, elicitation_callback=elicit) as session:
                init = await session.initialize()
                expect(init.protocolVersion, "2025-11-25", "negotiated revision")
                tools = await session.list_tools()
                names = sorted(t.name for t in tools.tools)
                expect(names, ["add", "confirm", "slow_sum", "touch", "two_questions", "whoami"], "tools/list")
                served = []
                for _ in range(3):
                    result = await session.call_tool("whoami", {})
                    if result.isError:
                        raise AssertionError(f"whoami failed: {result!r}")
                    served.append(result.structuredContent["result"] if result.structuredContent else result.content[0].text)
                added = await session.call_tool("add", {"a": 2, "b": 3})
                expect(added.structuredContent, {"result": 5}, "add on the session")
                # The server asks the client twice on the call's stream (one
                # replica); each answer is a POST of its own, which round
                # robin sends elsewhere, and which is forwarded back.
                asked_twice = await session.call_tool("two_questions", {})
                if asked_twice.isError:
                    raise AssertionError(f"two_questions failed: {asked_twice!r}")
                expect(asked, ["What is your name?", "What is your favorite color?"], "the questions asked")
                text = asked_twice.structuredContent["result"] if asked_twice.structuredContent else asked_twice.content[0].text
                if not text.startswith("Ada likes teal; rounds served by "):
                    raise AssertionError(f"unexpected answer: {text!r}")
        if len(set(served)) < 2:
            raise AssertionError(f"the session's calls all landed on one replica: {served}")
        print(f"scale-check:      the session's calls were served by {served}", flush=True)

    async def kill_one_replica_mid_load(self) -> None:
        """One replica killed mid-load: requests routed to the others keep
        succeeding; only calls in flight on the killed one may fail (502:
        nginx does not retry a POST it already sent)."""
        env = read_env(self.d.dir)
        ports = env["REPLICA_PORTS"].split()
        killed = "r2"
        results: list[tuple[float, str, int, bool]] = []
        stop = asyncio.Event()
        kill_at: list[float] = []

        async def worker(k: int) -> None:
            async with httpx.AsyncClient(timeout=WAIT_S) as client:
                n = 0
                while not stop.is_set():
                    n += 1
                    a = k * 1_000_000 + n
                    try:
                        response = await client.post(self.d.url, headers=headers("tools/call", "add"), json=call_body(n, "add", {"a": a, "b": 1}))
                        ok = response.status_code == 200 and structured(response.json()) == a + 1
                        results.append((time.monotonic(), self.d.replica(response), response.status_code, ok))
                    except (httpx.HTTPError, AssertionError):
                        results.append((time.monotonic(), "?", 0, False))

        workers = [asyncio.create_task(worker(k)) for k in range(4)]
        await asyncio.sleep(1.0)
        kill_at.append(time.monotonic())
        self.d.run("kill-replica", str(self.d.dir), "2")
        await asyncio.sleep(2.0)
        stop.set()
        await asyncio.gather(*workers)
        before = [r for r in results if r[0] < kill_at[0]]
        after = [r for r in results if r[0] >= kill_at[0]]
        failed_after = [r for r in after if not r[3]]
        served_after = {r[1] for r in after if r[3]}
        print(f"scale-check:      {len(before)} calls before the kill, {len(after)} after, {len(failed_after)} failed after: {failed_after[:4]}", flush=True)
        if not before or not all(r[3] for r in before):
            raise AssertionError(f"calls failed before the kill: {[r for r in before if not r[3]][:4]}")
        if len(failed_after) > 4:
            raise AssertionError(f"{len(failed_after)} calls failed after the kill (at most the 4 in flight on {killed} may): {failed_after[:6]}")
        late = [r for r in failed_after if r[0] > kill_at[0] + 0.5]
        if late:
            raise AssertionError(f"calls still failing 0.5 s after the kill: {late[:4]}")
        expect(served_after - {killed}, {"r1", "r3"}, "replicas serving after the kill")
        if killed in {r[1] for r in after if r[3] and r[0] > kill_at[0] + 0.5}:
            raise AssertionError(f"{killed} answered after it was killed")
        del ports


async def main() -> int:
    d = Deployment(Path(sys.argv[1]))
    checks = Checks(d)
    await checks.run("mrtr: input_required on one replica, the retry on another", checks.mrtr_across_replicas)
    await checks.run("subscriptions/listen on each replica gets an update published on a fourth connection", checks.listen_on_every_replica)
    await checks.run("redis restarted: listeners resynchronized, nothing invented, serving continues", checks.redis_restart)
    await checks.run("a task created on one replica is polled, answered, cancelled and collected through the others", checks.task_across_replicas)
    await checks.run("legacy session (mcp 1.30.0) spread over the replicas, elicitation answers forwarded", checks.legacy_session_spread)
    await checks.run("one replica killed mid-load: the others keep serving", checks.kill_one_replica_mid_load)
    print(f"scale-check: {checks.passed} passed, {checks.failed} failed", flush=True)
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
