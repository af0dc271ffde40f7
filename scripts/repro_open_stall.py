"""Reproduces the bench_live flake "the server closed a viewer's connection while it was opening" without the
bench around it, and shows where the connections wait (issue 16).

Each round starts `photowall serve`, opens 1,000 WebSocket viewers as bench_live does (4 processes x 250, the
handshake, `connect` and `subscribe` sent in one write per socket) and waits for every `subscribed`. When a socket
has had no answer for 3 s, it prints, from /proc, each epoll set of the server with how many of its sockets have
unread bytes (the kernel's receive queue). Seen on this box (libmicrohttpd 0.9.75, 2 event threads) in about 1
round in 8: one MHD worker has exactly 128 x k (256 or 384) connections with the whole request unread, and it
waits in epoll_wait with the connection timeout (~30 s), while the other worker idles. That is the drain loop of
MHD_epoll: `while (MAX_EVENTS == num_events) epoll_wait(..., timeout_ms)` with MAX_EVENTS 128 calls epoll_wait
again with the same timeout when a call returned exactly 128 events; the edge-triggered events already taken sit in
the eready list, processed only after the loop, so when no further event comes the worker sleeps until the
timeout. The request-head watchdog (10 s) then shuts those sockets down: the viewer reads end of stream.

Usage: python3 scripts/repro_open_stall.py BIN [ROUNDS]   (BIN: a release `photowall`; default 40 rounds)"""
import base64
import json
import multiprocessing
import os
import shutil
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_live as bl  # noqa: E402
from bench_common import start_photowall, stop  # noqa: E402


def viewers(port, n, out, stuck):
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(f"GET /parse HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
                  + bl.masked(json.dumps({"op": "connect", "applicationId": bl.APP}))
                  + bl.masked(json.dumps({"op": "subscribe", "requestId": 1, "query": {"className": "BenchLive", "where": {}}})))
        socks.append((s, time.monotonic()))
    slowest, failed = 0.0, 0
    for s, sent in socks:
        buf = b""
        while b'"op":"subscribed"' not in buf:
            s.settimeout(max(0.2, sent + 3 - time.monotonic()) if not stuck.is_set() else 60)
            try:
                data = s.recv(4096)
            except socket.timeout:
                stuck.set()
                continue
            if not data:
                failed += 1
                break
            buf += data
        slowest = max(slowest, time.monotonic() - sent)
    out.put((slowest, failed))
    for s, _ in socks:
        s.close()


def epoll_report(pid, port):
    """Each epoll set of `pid`: its fds and how many are sockets on `port` with unread bytes."""
    unread = {}
    for line in open(f"/proc/{pid}/net/tcp").read().splitlines()[1:]:
        f = line.split()
        if int(f[1].split(":")[1], 16) == port:
            unread[int(f[9])] = int(f[4].split(":")[1], 16)
    lines = []
    for fd in sorted(os.listdir(f"/proc/{pid}/fd"), key=int):
        try:
            if "eventpoll" not in os.readlink(f"/proc/{pid}/fd/{fd}"):
                continue
            info = open(f"/proc/{pid}/fdinfo/{fd}").read().splitlines()
        except OSError:
            continue
        inodes = [int(x.split("ino:")[1].split()[0], 16) for x in info if x.startswith("tfd:")]
        if inodes:
            lines.append(f"  epoll fd {fd}: {len(inodes)} fds, {sum(1 for i in inodes if unread.get(i, 0) > 0)} sockets with unread bytes")
    return "\n".join(lines)


def main(binary, rounds):
    for r in range(rounds):
        data = tempfile.mkdtemp(prefix="photowall-repro-")
        srv, port = start_photowall(binary, data, bl.APP, bl.MASTER, extra=["--live-connections-per-ip", "1010"])
        out, stuck = multiprocessing.Queue(), multiprocessing.Event()
        procs = [multiprocessing.Process(target=viewers, args=(port, 250, out, stuck)) for _ in range(4)]
        for p in procs:
            p.start()
        report = None
        while out.qsize() < len(procs) and any(p.is_alive() for p in procs):
            if report is None and stuck.wait(0.2):
                report = epoll_report(srv.pid, port)
        results = [out.get() for _ in procs]
        for p in procs:
            p.join()
        stop(srv)
        shutil.rmtree(data, ignore_errors=True)
        print(f"round {r}: slowest opening {max(x[0] for x in results):.2f} s, closed while opening {sum(x[1] for x in results)}"
              f", load {os.getloadavg()[0]:.1f}" + (f"\n{report}" if report else ""), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40)
