"""`make bench` row for the live wall: N WebSocket viewers subscribed to one class (LiveQuery at ws://…/parse)
while the master key writes W objects a second (in `wall` mode, a poster W photos a second); the latency from each write's acknowledgement (its HTTP 201
read by the writer) to the event's arrival at every viewer, p50/p99, and the server's memory per idle
connection (RSS growth / N). Beside it, polling every 2 s (what a wall without LiveQuery does), measured the
same way. Raw sockets, so it needs nothing beyond Python 3.

The viewers are a lean load client, so the figure is the server's: BENCH_LIVE_PROCS processes (default 4)
each hold their share of the connections on raw non-blocking sockets and one epoll, take the time once per
recv(2) and parse frames with a few byte operations (no asyncio streams, no JSON per event); each sends its
(seq, arrival) pairs back and the parent merges them. (The first version ran all viewers as asyncio streams in
one process beside the writer and the pollers: with 1,000 viewers that process parsed 10,000 frames a second
on one core, so a frame waited behind the ~1,000 others of its event in Python, which added tens to hundreds
of ms to p99 that were not the server's.) The table also gives the CPU the server and the load client used
during the writes, so a reader sees which side was busy.

Three kinds of viewers (BENCH_LIVE_MODES, `anonymous,distinct` by default): `anonymous` viewers carry no
session, so the server checks and renders each event once for all of them; `distinct` viewers are each their
own logged-in user (sessions seeded with `photowall seed-demo --viewers 0,0,…`), so it checks a session and
decides visibility once per viewer, but `BenchLive` (no include, no field rule) is still rendered once for all.
`wall` is the live friend feed of issue 16: the viewers are 1,000 users who are all friends of one poster
(`seed-demo --users 1 --viewers 1,1,…`: each viewer's one friend is the one seeded user), subscribed to
`WallImage` with `where: {}`, and the poster (that user, logged in with a password the master key sets)
posts photos as a client does: the files are uploaded (`POST /files`, the 8 sample photos in turn) before
the timed phase, and each timed write is the `WallImage` create (its thumbnails made before the 201, which
is the acknowledgement timed). Every event is checked after the run: a `create` whose object carries the
author included (`{"__type":"Object","className":"_User"}` with the poster's objectId, name and fbId) and
signed `thumbnail` and `display` URLs, `width` and `height`; any other frame fails the run. The pollers read
the feed (`POST /functions/feed`, limit 1) with viewers' sessions.

Usage: python3 scripts/bench_live.py BIN [PEER_BIN …]   (BENCH_LIVE_VIEWERS=1000 BENCH_LIVE_RATE=10
BENCH_LIVE_SECONDS=10 BENCH_LIVE_PROCS=4 BENCH_LIVE_MODES=anonymous,distinct[,wall] BENCH_LIVE_RUNS=1
BENCH_LIVE_FRIENDS=1: in `wall` mode, each viewer's friends, the poster among them). With peers
(e.g. main's build) and BENCH_LIVE_RUNS=3, each mode runs 3 times with the binaries interleaved and the table
gives each binary's medians and every run's p99."""
import base64
import json
import multiprocessing
import os
import re
import resource
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import api, cpu_seconds, start_photowall, stop  # noqa: E402

APP, MASTER = "benchapp", "bench-master"
VIEWERS = int(os.environ.get("BENCH_LIVE_VIEWERS", "1000"))
RATE = float(os.environ.get("BENCH_LIVE_RATE", "10"))
SECONDS = float(os.environ.get("BENCH_LIVE_SECONDS", "10"))
PROCS = max(1, min(VIEWERS, int(os.environ.get("BENCH_LIVE_PROCS", "4"))))
MODES = [m for m in os.environ.get("BENCH_LIVE_MODES", "anonymous,distinct").split(",") if m]
RUNS = max(1, int(os.environ.get("BENCH_LIVE_RUNS", "1")))
# `wall` mode: how many friends each viewer has (the poster and F-1 others), so each friendship check reads a
# friend list of that size, as on a real wall.
FRIENDS = max(1, int(os.environ.get("BENCH_LIVE_FRIENDS", "1")))
assert set(MODES) <= {"anonymous", "distinct", "wall"}, "BENCH_LIVE_MODES: anonymous, distinct, wall"
POLLERS = 20
POLL_S = 2.0
SEQ = re.compile(rb'"seq":(-?\d+)')
# `wall` mode: a write's number rides in the photo's caption (a client may not add fields to WallImage).
CAPTION = re.compile(rb'"caption":"seq (-?\d+)"')
PHOTOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Samples", "photos")
POSTER_PASSWORD = "bench-poster-pw"


def masked(text):
    payload, mask = text.encode(), os.urandom(4)
    n = len(payload)
    head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big"))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


PONG = bytes([0x8A, 0x80, 0, 0, 0, 0])


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def frames(buf):
    """Complete server frames at the start of `buf`: yields (opcode, payload, end offset)."""
    i, n = 0, len(buf)
    while i + 2 <= n:
        b0, b1 = buf[i], buf[i + 1]
        length, head = b1 & 0x7F, 2
        if length == 126:
            if i + 4 > n:
                return
            length, head = int.from_bytes(buf[i + 2:i + 4], "big"), 4
        elif length == 127:
            if i + 10 > n:
                return
            length, head = int.from_bytes(buf[i + 2:i + 10], "big"), 10
        if i + head + length > n:
            return
        yield b0 & 0x0F, buf[i + head:i + head + length], i + head + length
        i += head + length


def opening_trace(buf):
    """What a viewer had read when its opening stopped: the status line, then each frame (a close's code and
    reason, a text frame's first bytes), for the message of a failed opening."""
    if b"\r\n\r\n" not in buf:
        return f"no complete response head ({len(buf)} bytes: {buf[:80]!r})"
    head, rest = buf.split(b"\r\n\r\n", 1)
    parts, end = [head.split(b"\r\n", 1)[0].decode(errors="replace")], 0
    for op, payload, end in frames(rest):
        if op == 8:
            code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
            parts.append(f"close {code} {payload[2:].decode(errors='replace')!r}")
        else:
            parts.append(f"op {op} {payload[:120]!r}")
    if end < len(rest):
        parts.append(f"{len(rest) - end} bytes of an unfinished frame")
    return "; ".join(parts)


def recv_some(s, seen, since):
    """The next bytes of an opening viewer (`seen`: what it read so far, `since`: when it connected, both for
    the message when the server closed it)."""
    try:
        data = s.recv(4096)
    except ConnectionResetError:
        data = None
    if not data:
        how = "reset" if data is None else "closed"
        raise SystemExit(f"the server {how} a viewer's connection while it was opening (after {time.monotonic() - since:.1f} s; "
                         f"read so far: {opening_trace(seen)})")
    return data


def open_viewers(port, tokens, class_name):
    """One connected viewer subscribed to `class_name` per entry of `tokens` (a session token, or None for anonymous): every
    handshake, `connect` and `subscribe` is sent first (in one write per socket: the frames ride behind the
    request head), then the answers are read.
    - Returns: [(socket, bytes read past the `subscribed`)]."""
    socks, since = [], time.monotonic()
    for token in tokens:
        connect = {"op": "connect", "applicationId": APP}
        if token:
            connect["sessionToken"] = token
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(f"GET /parse HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
                  + masked(json.dumps(connect))
                  + masked(json.dumps({"op": "subscribe", "requestId": 1, "query": {"className": class_name, "where": {}}})))
        socks.append(s)
    opened = []
    for s in socks:
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += recv_some(s, buf, since)
        seen = buf
        head, buf = buf.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head[:40]
        subscribed = False
        while not subscribed:
            consumed = 0
            for op, payload, end in frames(buf):
                consumed = end
                if op == 1 and b'"op":"subscribed"' in payload:
                    subscribed = True
                    break
            buf = buf[consumed:]
            if not subscribed:
                data = recv_some(s, seen, since)
                seen += data
                buf += data
        s.setblocking(False)
        opened.append((s, buf))
    return opened


def wall_event_problem(payload, poster):
    """Why `payload` is not the `create` of a poster's photo as a friend's feed item carries it (issue 16:
    the author included, signed thumbnail and display URLs, width and height); None when it is."""
    try:
        event = json.loads(payload)
    except ValueError:
        return f"not JSON: {payload[:200]!r}"
    obj = event.get("object") or {}
    user, thumb, display = obj.get("user"), obj.get("thumbnail"), obj.get("display")
    if event.get("op") != "create" or obj.get("className") != "WallImage":
        return f"not a WallImage create: {payload[:300]!r}"
    if not isinstance(user, dict) or {k: user.get(k) for k in ("__type", "className", "objectId", "name", "fbId")} != \
            {"__type": "Object", "className": "_User", **poster}:
        return f"author not included as the poster: {user!r}"
    for name, f in (("thumbnail", thumb), ("display", display)):
        url = f.get("url") if isinstance(f, dict) else None
        if not isinstance(url, str) or not url.startswith("http") or "sig=" not in url:
            return f"{name} without a signed URL: {f!r}"
    if not all(isinstance(obj.get(k), (int, float)) and obj.get(k) > 0 for k in ("width", "height")):
        return f"width/height missing: {obj.get('width')!r}/{obj.get('height')!r}"
    return None


def viewer_process(port, tokens, ready, done, results, poster=None):
    """Opens one viewer per session token (None: anonymous), reports ready, then records (seq, arrival) of every `create` until `done`
    (answering pings all along). With `poster` ({objectId, name, fbId}: `wall` mode) the viewers follow
    `WallImage`, the seq is read from the caption, and every text frame is kept and checked afterwards
    (`wall_event_problem`; JSON is not parsed while frames arrive, so the check doesn't delay the timing)."""
    socks = open_viewers(port, tokens, "WallImage" if poster else "BenchLive")
    pattern = CAPTION if poster else SEQ
    kept = []
    ready.release()
    ep = select.epoll()
    bufs = {}
    for s, rest in socks:
        ep.register(s.fileno(), select.EPOLLIN)
        bufs[s.fileno()] = [s, rest]
    arrivals, closed = [], 0
    start_cpu = resource.getrusage(resource.RUSAGE_SELF)
    while not done.is_set():
        for fd, _ in ep.poll(0.2):
            entry = bufs[fd]
            try:
                data = entry[0].recv(262144)
            except BlockingIOError:
                continue
            now = time.monotonic()
            if not data:
                ep.unregister(fd)
                closed += 1
                continue
            buf = entry[1] + data
            consumed = 0
            for op, payload, end in frames(buf):
                consumed = end
                if op == 1:
                    m = pattern.search(payload) if b'"op":"create"' in payload else None
                    if m:
                        arrivals.append((int(m.group(1)), now))
                    if poster:
                        kept.append(payload)
                elif op == 9:
                    entry[0].send(PONG)
            entry[1] = buf[consumed:]
    used = resource.getrusage(resource.RUSAGE_SELF)
    problems = [p for p in (wall_event_problem(k, poster) for k in kept) if p] if poster else []
    results.put((arrivals, used.ru_utime + used.ru_stime - start_cpu.ru_utime - start_cpu.ru_stime, problems, closed))
    for s, _ in socks:
        s.close()


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


def seed_viewers(binary, data, count, friends=0):
    """`count` distinct users, each with its own session (`photowall seed-demo --viewers F,F,…`, straight
    into the data folder before the server starts, so no signup's password hashing is timed). With
    `friends=F` (F ≥ 1) each viewer's friends are all F seeded users (`--users F`: a viewer's friends are drawn
    from the `--users` people before it, exactly F of them), among them the first, the `wall` mode's poster.
    - Returns: their session tokens."""
    out = subprocess.run([binary, "seed-demo", "--data-dir", data, "--users", str(max(1, friends)), "--images", "0", "--json", "--photos", PHOTOS,
                          "--viewers", ",".join([str(friends)] * count)], check=True, capture_output=True, text=True).stdout
    viewers = json.loads(out)["viewers"]
    tokens = [v["sessionToken"] for v in viewers]
    assert len(set(tokens)) == count, "seed-demo gave fewer sessions than viewers"
    assert all(v["friends"] == friends for v in viewers), "seed-demo gave a viewer another number of friends"
    return tokens


def log_in_poster(port):
    """The `wall` mode's poster: the one `--users` person of `seed_viewers` (username `fb_` + its fbId),
    given a password by the master key (`PUT /users/:id`) and logged in (`GET /login`), once before the
    viewers connect. - Returns: (session token, {objectId, name, fbId})."""
    found = api(port, APP, MASTER, "GET", "/classes/_User?where=" + urllib.parse.quote(json.dumps({"username": "fb_8" + "0" * 14})))["results"]
    assert len(found) == 1, f"the seeded poster is not there: {found}"
    user = found[0]
    api(port, APP, MASTER, "PUT", f"/users/{user['objectId']}", {"password": POSTER_PASSWORD})
    query = urllib.parse.urlencode({"username": user["username"], "password": POSTER_PASSWORD})
    req = urllib.request.Request(f"http://127.0.0.1:{port}/parse/login?{query}", headers={"X-Parse-Application-Id": APP})
    with urllib.request.urlopen(req) as r:
        token = json.loads(r.read())["sessionToken"]
    return token, {"objectId": user["objectId"], "name": user["name"], "fbId": user["fbId"]}


def upload_photos(port, token, count):
    """`count` files uploaded by the poster (`POST /files`, the sample photos in turn), as a client uploads
    a photo before it saves the `WallImage`. - Returns: their names."""
    photos = sorted(f for f in os.listdir(PHOTOS) if f.lower().endswith(".jpg"))
    names = []
    for i in range(count):
        with open(os.path.join(PHOTOS, photos[i % len(photos)]), "rb") as f:
            body = f.read()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/parse/files/{photos[i % len(photos)]}", data=body, method="POST",
                                     headers={"X-Parse-Application-Id": APP, "X-Parse-Session-Token": token, "Content-Type": "image/jpeg"})
        with urllib.request.urlopen(req) as r:
            names.append(json.loads(r.read())["name"])
    return names


def post_photo(port, token, name, seq):
    """The poster's `WallImage` of the uploaded file `name`, captioned `seq N`; returns once its 201 is read."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/parse/classes/WallImage", method="POST",
                                 data=json.dumps({"image": {"__type": "File", "name": name}, "caption": f"seq {seq}"}).encode(),
                                 headers={"X-Parse-Application-Id": APP, "X-Parse-Session-Token": token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        r.read()
        if r.status != 201:
            raise SystemExit(f"the WallImage create answered {r.status}, not 201")


def newest_in_feed(port, token):
    """The seq of the newest photo in the feed of the viewer with session `token` (-2 when it is empty)."""
    images = api(port, APP, MASTER, "POST", "/functions/feed", {"limit": 1}, token=token)["result"]["images"]
    m = re.fullmatch(r"seq (-?\d+)", (images[0].get("caption") or "") if images else "")
    return int(m.group(1)) if m else -2


def run_once(binary, mode):
    """One measured run of BINARY with VIEWERS viewers of MODE (`anonymous`: no session, so every viewer
    gets the one rendering of an event; `distinct`: each viewer its own logged-in user, so the server checks
    a session per viewer; `wall`: each viewer a logged-in friend of the poster, following `WallImage`, so
    the server checks the friendship and renders the photo for each viewer). - Returns: the run's figures (dict)."""
    data = tempfile.mkdtemp(prefix="photowall-bench-live-")
    tokens = seed_viewers(binary, data, VIEWERS, friends=FRIENDS if mode == "wall" else 0) if mode != "anonymous" else [None] * VIEWERS
    srv, port = start_photowall(binary, data, APP, MASTER, extra=["--live-connections-per-ip", str(VIEWERS + 10)])
    ctx = multiprocessing.get_context("fork")
    procs = []
    try:
        poster = None
        if mode == "wall":
            poster_token, poster = log_in_poster(port)
            files = upload_photos(port, poster_token, int(RATE * SECONDS) + 1)

            def write(seq):
                post_photo(port, poster_token, files[seq + 1], seq)

            def newest_seen(i):
                return newest_in_feed(port, tokens[i % len(tokens)])
        else:
            def write(seq):
                post(port, seq)

            def newest_seen(i):
                return newest(port)
        write(-1)  # the class exists, the first write's costs are paid
        base = rss_kib(srv.pid)
        ready, done, results = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
        shares = [VIEWERS // PROCS + (1 if i < VIEWERS % PROCS else 0) for i in range(PROCS)]
        offset = 0
        for share in shares:
            p = ctx.Process(target=viewer_process, args=(port, tokens[offset:offset + share], ready, done, results, poster), daemon=True)
            offset += share
            p.start()
            procs.append(p)
        # A viewer process that fails while opening exits without releasing: end the run as soon as one has
        # (its message is above), and don't wait for ever.
        opened, give_up = 0, time.monotonic() + 300
        while opened < len(shares):
            if ready.acquire(timeout=0.5):
                opened += 1
            elif any(p.exitcode not in (None, 0) for p in procs):
                raise SystemExit("a viewer process failed while opening (see its message above)")
            elif time.monotonic() > give_up:
                raise SystemExit("the viewers did not all open within 300 s")
        time.sleep(1)
        per_conn = (rss_kib(srv.pid) - base) / VIEWERS
        acks, seen_by_poll, stop_polling = {}, [], threading.Event()

        def writer():
            start = time.monotonic()
            for seq in range(int(RATE * SECONDS)):
                time.sleep(max(0.0, start + seq / RATE - time.monotonic()))
                write(seq)
                acks[seq] = time.monotonic()

        def poller(i):
            time.sleep(POLL_S * i / POLLERS)
            last = -1
            while not stop_polling.is_set():
                seq = newest_seen(i)
                now = time.monotonic()
                # Polling shows a write when a poll after it comes back (everything up to `seq` is now seen).
                for s in range(last + 1, seq + 1):
                    seen_by_poll.append((s, now))
                last = max(last, seq)
                time.sleep(POLL_S)

        pollers = [threading.Thread(target=poller, args=(i,), daemon=True) for i in range(POLLERS)]
        for t in pollers:
            t.start()
        load = os.getloadavg()[0]
        server_cpu0, wall0 = cpu_seconds(srv.pid), time.monotonic()
        w = threading.Thread(target=writer)
        w.start()
        w.join()
        server_cpu = (cpu_seconds(srv.pid) - server_cpu0) / (time.monotonic() - wall0)
        time.sleep(POLL_S + 1)
        stop_polling.set()
        # A server still sending (a fan-out behind the writes) gets up to 60 s more, so "missing" counts
        # events never delivered, not late ones: wait until it uses under 0.1 cores for 0.5 s.
        for _ in range(120):
            cpu0 = cpu_seconds(srv.pid)
            time.sleep(0.5)
            if cpu_seconds(srv.pid) - cpu0 < 0.05:
                break
        done.set()
        arrivals, client_cpu, problems, closed = [], 0.0, [], 0
        for _ in procs:
            a, c, p, n = results.get(timeout=120)
            arrivals += a
            client_cpu += c
            problems += p
            closed += n
        client_cpu /= (time.monotonic() - wall0)
        if problems:
            raise SystemExit(f"{binary}: {len(problems)} event(s) are not a friend's photo as the feed carries it, e.g. {problems[0]}")
        live = [max(0.0, t - acks[s]) * 1000 for s, t in arrivals if s in acks]
        if os.environ.get("BENCH_LIVE_PER_WRITE"):  # diagnosis: each write's median and worst delivery, ms
            per = {}
            for s, t in arrivals:
                if s in acks:
                    per.setdefault(s, []).append(max(0.0, t - acks[s]) * 1000)
            print("  per write (seq: p50/max ms): " + ", ".join(
                f"{s}: {pct(v, .5):.0f}/{max(v):.0f}" for s, v in sorted(per.items())), file=sys.stderr)
        polled = [max(0.0, t - acks[s]) * 1000 for s, t in seen_by_poll if s in acks]
        return {"samples": len(live), "p50": pct(live, .5), "p99": pct(live, .99), "missing": len(acks) * VIEWERS - len(live), "closed": closed,
                "poll_p50": pct(polled, .5), "poll_p99": pct(polled, .99), "per_conn": per_conn,
                "server_cpu": server_cpu, "client_cpu": client_cpu, "load": load}
    finally:
        done_flag = locals().get("done")
        if done_flag is not None:
            done_flag.set()
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
        stop(srv)
        shutil.rmtree(data, ignore_errors=True)


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2


def main(binaries):
    """Runs every mode RUNS times, the binaries interleaved (the first is the one measured, any others its
    peers, e.g. main's build, in the same session), and prints each run and the medians."""
    rows = []
    for mode in MODES:
        for _ in range(RUNS):
            for binary in binaries:
                r = run_once(binary, mode)
                rows.append((mode, binary, r))
                print(f"  {mode:9} {binary}: p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, missing {r['missing']}, "
                      f"connections closed by the server {r['closed']}, "
                      f"server {r['server_cpu']:.2f} cores, client {r['client_cpu']:.2f} cores, load {r['load']:.1f}", flush=True)
    print(f"\nLive wall: {VIEWERS} WebSocket viewers in {PROCS} client processes, {RATE:g} writes/s for {SECONDS:g} s, "
          f"median of {RUNS} run(s) each, binaries interleaved (machine shared: load average "
          f"{min(r['load'] for _, _, r in rows):.1f}–{max(r['load'] for _, _, r in rows):.1f} on {os.cpu_count()} cores)")
    print("| viewers | binary | p50 ms | p99 ms (each run) | missing | server cores | client cores | KiB per idle connection |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in MODES:
        for binary in binaries:
            rs = [r for m, b, r in rows if m == mode and b == binary]
            runs = " / ".join(f"{r['p99']:.1f}" for r in rs)
            label = {"anonymous": "anonymous (one rendering per event)", "distinct": "distinct logged-in, `BenchLive` (one rendering per event)",
                     "wall": f"friends following `WallImage` (author included, URLs signed; {FRIENDS} friend(s) each)"}[mode]
            print(f"| {label} | {binary} | {median([r['p50'] for r in rs]):.1f} | **{median([r['p99'] for r in rs]):.1f}** "
                  f"({runs}) | {sum(r['missing'] for r in rs)} | "
                  f"{median([r['server_cpu'] for r in rs]):.2f} | {median([r['client_cpu'] for r in rs]):.2f} | "
                  f"{median([r['per_conn'] for r in rs]):.1f} |")
    polled = [r for m, b, r in rows if b == binaries[0]]
    print(f"| polling every {POLL_S:g} s ({POLLERS} pollers) | {binaries[0]} | {median([r['poll_p50'] for r in polled]):.1f} "
          f"| {median([r['poll_p99'] for r in polled]):.1f} | – | | | |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
