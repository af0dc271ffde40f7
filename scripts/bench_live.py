"""`make bench` row for the live wall: N WebSocket viewers subscribed to one class (LiveQuery at ws://…/parse)
while the master key writes W objects a second; the latency from each write's acknowledgement (its HTTP 201
read by the writer) to the event's arrival at every viewer, p50/p99, and the server's memory per idle
connection (RSS growth / N). Beside it, polling every 2 s (what a wall without LiveQuery does), measured the
same way. Raw sockets and asyncio, so it needs nothing beyond Python 3.

Usage: python3 scripts/bench_live.py BIN   (BENCH_LIVE_VIEWERS=1000 BENCH_LIVE_RATE=10 BENCH_LIVE_SECONDS=10)"""
import asyncio
import base64
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import start_photowall, stop  # noqa: E402

APP, MASTER = "benchapp", "bench-master"
VIEWERS = int(os.environ.get("BENCH_LIVE_VIEWERS", "1000"))
RATE = float(os.environ.get("BENCH_LIVE_RATE", "10"))
SECONDS = float(os.environ.get("BENCH_LIVE_SECONDS", "10"))
POLLERS = 20
POLL_S = 2.0


def masked(text):
    payload, mask = text.encode(), os.urandom(4)
    n = len(payload)
    head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big"))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Viewer:
    def __init__(self, port, arrivals):
        self.port, self.arrivals = port, arrivals

    async def open(self):
        self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)
        key = base64.b64encode(os.urandom(16)).decode()
        self.w.write(f"GET /parse HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        head = await self.r.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head[:40]
        self.w.write(masked(json.dumps({"op": "connect", "applicationId": APP})))
        self.w.write(masked(json.dumps({"op": "subscribe", "requestId": 1, "query": {"className": "BenchLive", "where": {}}})))
        while (await self.frame()).get("op") != "subscribed":
            pass

    async def frame(self):
        while True:
            b0, b1 = await self.r.readexactly(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(await self.r.readexactly(2), "big")
            elif n == 127:
                n = int.from_bytes(await self.r.readexactly(8), "big")
            payload = await self.r.readexactly(n)
            op = b0 & 0x0F
            if op == 9:  # ping → pong
                self.w.write(bytes([0x8A, 0x80]) + os.urandom(4))
                continue
            if op == 1:
                return json.loads(payload)
            if op == 8:
                raise EOFError("closed")

    async def listen(self):
        try:
            while True:
                m = await self.frame()
                if m.get("op") == "create":
                    self.arrivals.append((m["object"]["seq"], time.monotonic()))
        except (EOFError, asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass


def post(port, seq):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/parse/classes/BenchLive", data=json.dumps({"seq": seq}).encode(),
                                 method="POST", headers={"X-Parse-Application-Id": APP, "X-Parse-Master-Key": MASTER,
                                                         "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        r.read()


def newest(port):
    url = f"http://127.0.0.1:{port}/parse/classes/BenchLive?order=-createdAt&limit=1"
    req = urllib.request.Request(url, headers={"X-Parse-Application-Id": APP, "X-Parse-Master-Key": MASTER})
    with urllib.request.urlopen(req) as r:
        results = json.loads(r.read())["results"]
    return results[0]["seq"] if results else -1


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


async def main(binary):
    data = tempfile.mkdtemp(prefix="photowall-bench-live-")
    srv, port = start_photowall(binary, data, APP, MASTER, extra=["--live-connections-per-ip", str(VIEWERS + 10)])
    try:
        post(port, -1)  # the class exists, the first write's costs are paid
        base = rss_kib(srv.pid)
        arrivals = []
        viewers = [Viewer(port, arrivals) for _ in range(VIEWERS)]
        for i in range(0, VIEWERS, 100):
            await asyncio.gather(*(v.open() for v in viewers[i:i + 100]))
        await asyncio.sleep(1)
        per_conn = (rss_kib(srv.pid) - base) / VIEWERS
        tasks = [asyncio.create_task(v.listen()) for v in viewers]
        acks, seen_by_poll, stop_polling = {}, [], threading.Event()

        def writer():
            start = time.monotonic()
            for seq in range(int(RATE * SECONDS)):
                time.sleep(max(0.0, start + seq / RATE - time.monotonic()))
                post(port, seq)
                acks[seq] = time.monotonic()

        def poller(offset):
            time.sleep(offset)
            last = -1
            while not stop_polling.is_set():
                seq = newest(port)
                now = time.monotonic()
                # Polling shows a write when a poll after it comes back (everything up to `seq` is now seen).
                for s in range(last + 1, seq + 1):
                    seen_by_poll.append((s, now))
                last = max(last, seq)
                time.sleep(POLL_S)

        pollers = [threading.Thread(target=poller, args=(POLL_S * i / POLLERS,), daemon=True) for i in range(POLLERS)]
        for t in pollers:
            t.start()
        w = threading.Thread(target=writer)
        w.start()
        while w.is_alive():
            await asyncio.sleep(0.1)
        await asyncio.sleep(POLL_S + 1)
        stop_polling.set()
        for t in tasks:
            t.cancel()
        live = [max(0.0, t - acks[s]) * 1000 for s, t in arrivals if s in acks]
        polled = [max(0.0, t - acks[s]) * 1000 for s, t in seen_by_poll if s in acks]
        expected = len(acks) * VIEWERS
        print(f"\nLive wall: {VIEWERS} WebSocket viewers, {RATE:g} writes/s for {SECONDS:g} s (machine shared; noisy)")
        print("| delivery | samples | p50 ms | p99 ms | missing |")
        print("|---|---|---|---|---|")
        print(f"| LiveQuery event after the write's 201 | {len(live)} | {pct(live, .5):.1f} | {pct(live, .99):.1f} | {expected - len(live)} |")
        print(f"| polling every {POLL_S:g} s ({POLLERS} pollers) | {len(polled)} | {pct(polled, .5):.1f} | {pct(polled, .99):.1f} | – |")
        print(f"| memory per idle connection | | {per_conn:.1f} KiB (RSS growth / {VIEWERS}) | | |")
    finally:
        stop(srv)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
