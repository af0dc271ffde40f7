#!/usr/bin/env python3
"""API benchmark (issue: service core): PhotoWall beside nginx in the same run, on loopback.

- GET /parse/classes/WallImage/:id and a 100-object query, with wrk, beside nginx serving a static
  JSON file of the same bytes (req/s and p99 latency, and their ratio), and each server's CPU time per
  request (steadier than req/s between runs; wrk's own share of the cores is not in it).
- A 256 MiB file POST to /parse/files (streamed, fsynced) beside nginx accepting the same body
  with WebDAV PUT into a file (MB/s ratio), and PhotoWall's peak RSS during the upload. Every timed
  write starts after a `sync(2)`, so none pays for what the one before left dirty (the generated body,
  nginx's unsynced file).

Usage: bench_api.py PHOTOWALL_BINARY [BASELINE_BINARY]   (needs wrk, nginx, curl; `make bench` installs them)

With BASELINE_BINARY (e.g. main's build), the read rows also run it on the same data, in the same
rounds, taken in turn with the others, and print PhotoWall ÷ baseline beside the nginx ratio.
"""
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/photowall"
BASELINE = sys.argv[2] if len(sys.argv) > 2 else None
APP = "benchapp"
MASTER = "bench-master"
DURATION = os.environ.get("BENCH_SECONDS", "8")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
UPLOAD_MB = int(os.environ.get("BENCH_UPLOAD_MB", "256"))
# BENCH_API_UPLOAD=0 leaves the upload rows out (for profiling the read rows on their own).
UPLOAD = os.environ.get("BENCH_API_UPLOAD", "1") != "0"
# BENCH_API_FLOOR=1 adds the engine's floor: GET /parse/health, answered from the route table without a
# handler (no credentials, no database, no JSON work), beside nginx: the most any read route can reach.
FLOOR = os.environ.get("BENCH_API_FLOOR", "0") == "1"
# BENCH_API_READS=0 leaves the read rows out (the upload rows on their own).
READS = os.environ.get("BENCH_API_READS", "1") != "0"
# The read goals (issue 14): GET one object ≥ 0.4× nginx; the 100-object query ≥ 5× the req/s main
# had before the issue (1,236), with p99 ≤ 5× nginx's.
QUERY_BASELINE_RPS = 1236
# nginx served the same 78 KB page at 28,544 req/s in that run. The req/s goal assumes that machine's
# speed; on a slower or faster day (nginx's rate moved 21k–40k between sessions), the ratio to nginx
# divided by that run's ratio (1,236 / 28,544) tells how far the goal is met on the terms.
QUERY_BASELINE_NGINX_RPS = 28544

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402
from bench_common import cpu_seconds, process_tree, rss_sampler, start_nginx, stop, start_photowall as _start  # noqa: E402


def start_photowall(data, binary=None):
    # The Parse REST core as a client without a session sees it (the wall's friends-only
    # visibility is measured by the feed benchmark).
    return _start(binary or BIN, data, APP, MASTER, ["--max-upload-size", "1gb", "--wall-visibility", "public"])


def api(port, method, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/parse{path}", method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"X-Parse-Application-Id": APP, "X-Parse-Master-Key": MASTER,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return r.read()


def wrk(url, headers=(), pids=()):
    """wrk against `url`. - Returns: (req/s, p99 ms, CPU µs per request of the processes `pids`
    together: the server's, user + system)."""
    args = ["wrk", "-t2", "-c64", f"-d{DURATION}s", "--latency"]
    for h in headers:
        args += ["-H", h]
    cpu0 = sum(cpu_seconds(p) for p in pids)
    out = subprocess.run(args + [url], capture_output=True, text=True).stdout
    cpu = sum(cpu_seconds(p) for p in pids) - cpu0
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non2xx:
        raise SystemExit(f"wrk saw errors on {url}: {non2xx.group(1)}\n{out}")
    return rps, float(p99.group(1)) * scale, cpu / max(1, requests) * 1e6


def upload(url, path, headers, method="POST"):
    args = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "-X", method, "--data-binary", f"@{path}"]
    for h in headers:
        args += ["-H", h]
    code, secs = subprocess.run(args + [url], capture_output=True, text=True).stdout.split()
    return code, UPLOAD_MB * 1048576 / float(secs) / 1e6


def seed(work, port):
    """One photo-wall object and 100 for the query on the server at `port`.
    - Returns: (GET path, query path, GET body, query body)."""
    # One photo-wall object and 100 for the query, all with a real photo (the server makes
    # their thumbnail and display files), so responses have PhotoWall's real shape.
    photo = os.path.join(work, "photo.jpg")
    subprocess.run(["vips", "gaussnoise", photo, "640", "480"], check=True)
    with open(photo, "rb") as f:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/parse/files/photo.jpg", data=f.read(), method="POST",
                                     headers={"X-Parse-Application-Id": APP, "X-Parse-Master-Key": MASTER, "Content-Type": "image/jpeg"})
    image = {"__type": "File", "name": json.loads(urllib.request.urlopen(req).read())["name"]}
    user = {"__type": "Pointer", "className": "_User", "objectId": "abcdefghij"}
    one = json.loads(api(port, "POST", "/classes/WallImage", {"userFBId": "10001", "user": user, "image": image}))["objectId"]
    batch = [{"method": "POST", "path": "/parse/classes/WallImage",
              "body": {"userFBId": "q", "user": user, "image": image, "n": i}}
             for i in range(100)]
    api(port, "POST", "/batch", {"requests": batch})
    get_path = f"/classes/WallImage/{one}"
    query_path = "/classes/WallImage?where=%7B%22userFBId%22%3A%22q%22%7D&order=-createdAt&limit=100"
    get_body = api(port, "GET", get_path)
    query_body = api(port, "GET", query_path)
    return get_path, query_path, get_body, query_body


def main():
    work = tempfile.mkdtemp(prefix="photowall-bench-")
    try:
        rows = []
        data = os.path.join(work, "pw")
        os.makedirs(data)
        pw, port = start_photowall(data)
        get_path, query_path, get_body, query_body = seed(work, port) if READS else (None, None, b"", b"")
        base = None
        if BASELINE and READS:
            os.makedirs(os.path.join(work, "base"))
            base = start_photowall(os.path.join(work, "base"), BASELINE)
            bget, bquery, _, _ = seed(work, base[1])
        ng, nport = start_nginx(os.path.join(work, "ng"))
        with open(os.path.join(work, "ng", "www", "get.json"), "wb") as f:
            f.write(get_body)
        with open(os.path.join(work, "ng", "www", "query.json"), "wb") as f:
            f.write(query_body)
        headers = [f"X-Parse-Application-Id: {APP}"]
        cases = [("GET one object", get_path, "get.json", base and bget),
                 ("query 100 objects", query_path, "query.json", base and bquery)]
        if FLOOR:
            with open(os.path.join(work, "ng", "www", "health.json"), "wb") as f:
                f.write(api(port, "GET", "/health"))
            cases.insert(0, ("engine floor: GET /health, no handler", "/health", "health.json", base and "/health"))
        for label, path, static, bpath in (cases if READS else []):
            ours, theirs, baseline = [], [], []
            nginx_pids = process_tree(ng.pid)
            for _ in range(ROUNDS):   # taken in turn so drift hits both
                ours.append(wrk(f"http://127.0.0.1:{port}/parse{path}", headers, [pw.pid]))
                theirs.append(wrk(f"http://127.0.0.1:{nport}/{static}", pids=nginx_pids))
                if base:
                    baseline.append(wrk(f"http://127.0.0.1:{base[1]}/parse{bpath}", headers, [base[0].pid]))
            o = tuple(statistics.median(x[i] for x in ours) for i in range(3))
            t = tuple(statistics.median(x[i] for x in theirs) for i in range(3))
            size = {"get.json": len(get_body), "query.json": len(query_body)}.get(static) or os.path.getsize(os.path.join(work, "ng", "www", static))
            if static == "health.json":
                rate_goal = p99_goal = ("", None)
            elif static == "get.json":
                rate_goal = ("ratio ≥ 0.40", o[0] / t[0] >= 0.4)
                p99_goal = ("", None)
            else:
                rate_goal = (f"≥ {5 * QUERY_BASELINE_RPS:,} req/s (5× {QUERY_BASELINE_RPS:,})", o[0] >= 5 * QUERY_BASELINE_RPS)
                p99_goal = ("ratio ≤ 5", o[1] / t[1] <= 5)
            rows.append((f"{label} ({size} B)", "req/s", o[0], t[0], o[0] / t[0], rate_goal))
            rows.append((f"{label} p99", "ms", o[1], t[1], o[1] / t[1], p99_goal))
            if static == "query.json":
                gain = (o[0] / t[0]) / (QUERY_BASELINE_RPS / QUERY_BASELINE_NGINX_RPS)
                rows.append((f"  req/s against nginx, × the issue's run ({QUERY_BASELINE_RPS:,} ÷ {QUERY_BASELINE_NGINX_RPS:,})", "×", gain, float("nan"), float("nan"),
                             ("≥ 5× on the machine's speed of the day", gain >= 5)))
            # The servers' own CPU per request: steadier than req/s, which both share with wrk on the
            # same cores and which follow the machine's speed on the day (nginx's moved 90k–150k req/s).
            rows.append(("  server CPU per request", "µs", o[2], t[2], o[2] / t[2]))
            if base:
                b = tuple(statistics.median(x[i] for x in baseline) for i in range(3))
                rows.append((f"  baseline binary, req/s (PhotoWall ÷ baseline: {o[0] / b[0]:.2f}×)", "req/s", b[0], t[0], b[0] / t[0]))
                rows.append((f"  baseline binary, p99 (PhotoWall ÷ baseline: {o[1] / b[1]:.2f}×)", "ms", b[1], t[1], b[1] / t[1]))
                rows.append((f"  baseline binary, CPU per request (PhotoWall ÷ baseline: {o[2] / b[2]:.2f}×)", "µs", b[2], t[2], b[2] / t[2]))
        if base:
            stop(base[0])
        stop(pw)
        if not UPLOAD:
            ng.send_signal(signal.SIGQUIT)
            ng.wait(timeout=10)
            report(rows)
            return

        # Upload: a fresh server so its peak RSS is the upload's.
        blob = os.path.join(work, "blob.bin")
        with open(blob, "wb") as f:
            for _ in range(UPLOAD_MB):
                f.write(os.urandom(1048576))
        pw, port = start_photowall(data)
        # With BASELINE_BINARY, its POST too, on its own fresh server, in the same rounds.
        upbase = None
        if BASELINE:
            os.makedirs(os.path.join(work, "upbase"))
            upbase = start_photowall(os.path.join(work, "upbase"), BASELINE)
        ours, theirs, peaks, baseline_posts = [], [], [], []
        from bench_common import durable_write_mbs, vm_status  # noqa: E402 (here: the upload rows' own import)
        idle, idle_anon = vm_status(pw.pid, "VmRSS"), vm_status(pw.pid, "RssAnon")
        disk = []  # the disk's ceiling for a body acknowledged once durable (written + fdatasync), per round
        for i in range(ROUNDS):
            os.sync()  # every timed write starts on a clean disk: none pays for the writeback the one before left
            stop_event, peak = threading.Event(), []
            t = threading.Thread(target=rss_sampler, args=(pw.pid, stop_event, peak))
            t.start()
            code, mbs = upload(f"http://127.0.0.1:{port}/parse/files/big{i}.bin", blob,
                               [f"X-Parse-Application-Id: {APP}", f"X-Parse-Master-Key: {MASTER}", "Content-Type: application/octet-stream"])
            stop_event.set()
            t.join()
            assert code == "201", code
            ours.append(mbs)
            peaks.append(peak[0])
            if upbase:
                os.sync()
                code, mbs = upload(f"http://127.0.0.1:{upbase[1]}/parse/files/big{i}.bin", blob,
                                   [f"X-Parse-Application-Id: {APP}", f"X-Parse-Master-Key: {MASTER}", "Content-Type: application/octet-stream"])
                assert code == "201", code
                baseline_posts.append(mbs)
            os.sync()
            code, mbs = upload(f"http://127.0.0.1:{nport}/upload/big{i}.bin", blob, ["Content-Type: application/octet-stream"], "PUT")
            assert code in ("201", "204"), code
            theirs.append(mbs)
            os.remove(os.path.join(work, "ng", "www", "upload", f"big{i}.bin"))
            os.sync()
            disk.append(durable_write_mbs(work, UPLOAD_MB << 20))
        o, t = statistics.median(ours), statistics.median(theirs)
        rows.append((f"POST {UPLOAD_MB} MiB file (PhotoWall fsyncs; nginx not)", "MB/s", o, t, o / t, ("ratio ≥ 0.9", o / t >= 0.9)))
        if upbase:
            b = statistics.median(baseline_posts)
            rows.append((f"  baseline binary, POST (PhotoWall ÷ baseline: {o / b:.2f}×)", "MB/s", b, t, b / t))
            stop(upbase[0])
        d = statistics.median(disk)
        rows.append((f"  disk ceiling: {UPLOAD_MB} MiB written + fdatasync", "MB/s", d, t, d / t))
        rows.append(("PhotoWall peak RSS during upload", "MiB", max(peaks) / 1024, float("nan"), float("nan"),
                     ("< 32 MiB", max(peaks) / 1024 < 32)))
        # Most of a fresh server's RSS is shared-library pages (file-backed, shared with every process
        # using them; how many are mapped varies with what else keeps them cached): the upload's own
        # cost is the growth over the idle server.
        rows.append(("  of which the idle server before the uploads", "MiB", idle / 1024, float("nan"), float("nan")))
        rows.append(("    of which its own memory (RssAnon)", "MiB", idle_anon / 1024,
                     float("nan"), float("nan")))
        stop(pw)
        ng.send_signal(signal.SIGQUIT)
        ng.wait(timeout=10)

        report(rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(rows):
    """The table: each case's figures beside nginx's from the same run, and its goal beside them
    (a row is (name, unit, PhotoWall, nginx, ratio) or that plus (goal text, met or None))."""
    print(f"\nAPI benchmark — loopback, wrk -t2 -c64 -d{DURATION}s, median of {ROUNDS} rounds taken in turn; "
          "client and servers share the machine's cores. PhotoWall access log off (--log-level warning), as nginx's. "
          "Server CPU per request = the server's user + system CPU during the wrk run ÷ its requests (nginx: master and "
          "workers); unlike req/s it doesn't include wrk's own share of the cores.")
    if BASELINE:
        print(bench_common.baseline_note(BIN, BASELINE))
    print(f"{'case':<64} {'unit':>6} {'PhotoWall':>11} {'nginx':>11} {'ratio':>7}  goal")
    for row in rows:
        name, unit, a, b, r = row[:5]
        goal, met = row[5] if len(row) > 5 else ("", None)
        bs = "—" if b != b else f"{b:11.1f}"
        rs = "—" if r != r else f"{r:7.2f}"
        mark = "" if met is None else (" ✓" if met else " ✗")
        print(f"{name:<64} {unit:>6} {a:11.1f} {bs:>11} {rs:>7}  {goal}{mark}")
    print("goals: GET ratio ≥ 0.4; query ≥ 5× 1,236 req/s (or, on a machine of another speed, its ratio to nginx ≥ 5× the issue run's) with p99 ratio ≤ 5; upload ratio ≥ 0.9; peak RSS during upload < 32 MiB")
    print(bench_common.order_file_note(BIN))


if __name__ == "__main__":
    main()
