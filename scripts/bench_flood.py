#!/usr/bin/env python3
"""Slow-header flood benchmark (issue 11, finding 5): other clients' latency with and without one
address trickling request heads.

A client at 127.0.0.2 times GET /parse/health, each on a new connection, first alone, then while
127.0.0.1 holds FLOOD connections that send one header byte every 2 s (the attack that locked
everyone out before the per-address cap and the head deadline). PhotoWall runs with its defaults
(--max-connections-per-ip 64, --request-head-timeout 10), stated explicitly.

Usage: bench_flood.py PHOTOWALL_BINARY
"""
import http.client
import os
import resource
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/photowall"
FLOOD = int(os.environ.get("BENCH_FLOOD_CONNECTIONS", "2000"))
REQUESTS = int(os.environ.get("BENCH_FLOOD_REQUESTS", "300"))
APP, MASTER = "benchapp", "bench-master"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import start_photowall, stop  # noqa: E402


def latencies(port):
    """Milliseconds of REQUESTS sequential requests from 127.0.0.2; a failed one counts as None."""
    out = []
    for _ in range(REQUESTS):
        start = time.perf_counter()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=("127.0.0.2", 0))
            c.request("GET", "/parse/health", headers={"X-Parse-Application-Id": APP})
            ok = c.getresponse().status == 200
            c.close()
        except OSError:
            ok = False
        out.append((time.perf_counter() - start) * 1000 if ok else None)
    return out


def flood(port, stop_event, counts):
    """Opens FLOOD connections from 127.0.0.1 and trickles a header byte on each every 2 s."""
    head = b"GET /parse/health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 4000
    socks = []
    for _ in range(FLOOD):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
    sent = 0
    while not stop_event.is_set():
        alive = []
        for s in socks:
            try:
                s.send(head[sent:sent + 1])
                alive.append(s)
            except OSError:
                s.close()
        counts["open"] = len(alive)
        socks, sent = alive, sent + 1
        stop_event.wait(2)
    for s in socks:
        s.close()


def row(label, ms):
    ok = [m for m in ms if m is not None]
    q = statistics.quantiles(ok, n=100) if len(ok) > 1 else [float("nan")] * 99
    return f"{label:<52} {q[49]:9.2f} {q[98]:9.2f} {len(ms) - len(ok):>7}"


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, FLOOD + 256)), hard))
    work = tempfile.mkdtemp(prefix="photowall-flood-")
    try:
        pw, port = start_photowall(BIN, work, APP, MASTER, ["--max-connections-per-ip", "64", "--request-head-timeout", "10"])
        quiet = latencies(port)
        stop_event, counts = threading.Event(), {}
        t = threading.Thread(target=flood, args=(port, stop_event, counts))
        t.start()
        time.sleep(3)  # the flood is connected and has sent its first bytes
        flooded = latencies(port)
        held = counts.get("open", 0)
        stop_event.set()
        t.join()
        stop(pw)
        print(f"\nSlow-header flood — loopback; {REQUESTS} sequential GET /parse/health from 127.0.0.2, each on a new "
              f"connection, while 127.0.0.1 opens {FLOOD} connections trickling a header byte every 2 s "
              f"(defaults: 64 per address, 10 s head deadline; {held} flood sockets not yet closed by the server "
              "when measured, most of them refused at once).")
        print(f"{'case':<52} {'p50 ms':>9} {'p99 ms':>9} {'failed':>7}")
        print(row("other client, no flood", quiet))
        print(row(f"other client, {FLOOD}-connection slow-header flood", flooded))
        print("goal: p99 with the flood within a few ms of p99 without, no failures")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
