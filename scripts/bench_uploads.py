#!/usr/bin/env python3
"""Resumable-upload benchmark (issue: resumable chunked uploads), on loopback, in one run:

- A 1 GiB file through the PhotoWall client (`photowall upload --file-only --json`: tus, chunked
  PATCH with a SHA-256 per chunk, each chunk fsynced by the server before it counts) beside
  `curl -T` of the same file into nginx (WebDAV PUT into a file, no fsync): MB/s and their ratio; and,
  under each case, the disk's ceiling for it: the same bytes written with an fdatasync per chunk;
  and its hashing ceiling: the SHA passes the case makes over every byte (client checksum, server
  check, server's file digest), all at once on the machine's cores, with nothing else to do.
  The client's time runs from its `start` event to its `uploaded` event (so login and process
  start are not counted). Rounds are taken in turn so disk drift hits both. Every timed run starts
  after a `sync(2)`, so none of them pays for writing back what the one before left dirty (the
  generated file, nginx's unsynced PUT).
- The server's peak RSS (VmRSS sampled every 20 ms, and VmHWM) during 32 parallel 64 MiB uploads
  (`photowall upload --parallel 32`), from a freshly started server.

Usage: bench_uploads.py PHOTOWALL_BINARY [BASELINE_BINARY]   (needs nginx and curl; `make bench` installs them)
With BASELINE_BINARY (e.g. main's build: its client and its server), the big uploads also run through it,
in the same rounds, and print PhotoWall ÷ baseline.
Environment: BENCH_ROUNDS (default 3), BENCH_UPLOAD_GB_MB (size of the big file in MiB, default 1024),
BENCH_CASES (comma-separated CHUNK/CHECKSUM client settings for the big upload, default
"4m/sha256,64m/sha256,64m/none": the default chunk size, a large one, and a large one without the
per-chunk checksum, to show what the checksum costs), BENCH_UPLOAD_PARALLEL=0 (leaves the 32-upload
memory row out).
"""
import hashlib
import json
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/photowall")
BASELINE = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
APP = "benchapp"
MASTER = "bench-master"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
BIG_MB = int(os.environ.get("BENCH_UPLOAD_GB_MB", "1024"))
CASES = [tuple(c.split("/")) for c in os.environ.get("BENCH_CASES", "4m/sha256,64m/sha256,64m/none").split(",")]
# Issue 14's goals, as ratios to nginx's PUT in the same run (cases without one show none).
GOALS = {("4m", "sha256"): 0.7, ("64m", "none"): 0.9}
PARALLEL = 32
PARALLEL_MB = 64

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402
from bench_common import durable_write_mbs, rss_sampler, start_nginx, stop, vm_status, start_photowall as _start  # noqa: E402


def start_photowall(data, binary=None):
    return _start(binary or BIN, data, APP, MASTER, ["--max-upload-size", "2gb"])




# The SHA-256 / SHA-1 passes each upload case makes over every byte: the client's `Upload-Checksum`,
# the server's check of it, and the server's running SHA-256 of the file (for `duplicates` and the
# ETag), which every case makes.
PASSES = {"sha256": ["sha256"] * 3, "sha1": ["sha1", "sha1", "sha256"], "none": ["sha256"]}
NAMES = {"sha256": "SHA-256", "sha1": "SHA-1"}


def hashing_mbs(path, algorithms):
    """The hashing ceiling for an upload whose bytes are hashed once per entry of `algorithms`
    (hashlib names, OpenSSL's code as the server's): the file's bytes, read into memory first, hashed
    by every pass at once, one thread each (hashlib lets go of the GIL for large updates), in 4 MiB
    updates. No upload that makes these passes can go faster on this machine, whatever else it costs.
    - Returns: MB/s."""
    with open(path, "rb") as f:
        view = memoryview(f.read())

    def run(algorithm):
        h = hashlib.new(algorithm)
        for o in range(0, len(view), 4 << 20):
            h.update(view[o:o + (4 << 20)])

    threads = [threading.Thread(target=run, args=(a,)) for a in algorithms]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(view) / (time.monotonic() - start) / 1e6


def make_png(path, total):
    """A valid 16x16 PNG padded to TOTAL bytes with random data in a private chunk (decoders skip it)."""
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    raw = b"".join(b"\x00" + b"".join(bytes([x * 16, y * 16, 128]) for x in range(16)) for y in range(16))
    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw))
    tail = chunk(b"IEND", b"")
    pad = total - len(head) - len(tail) - 12
    with open(path, "wb") as f:
        f.write(head + struct.pack(">I", pad) + b"pwPd")
        crc, left = zlib.crc32(b"pwPd"), pad
        while left:
            b = os.urandom(min(left, 1 << 20))
            f.write(b)
            crc = zlib.crc32(b, crc)
            left -= len(b)
        f.write(struct.pack(">I", crc) + tail)


def api(port, method, path, body=None, token=None):
    return bench_common.api(port, APP, MASTER, method, path, body, token)


def CLI(home, port, binary=None):
    return bench_common.CLI(binary or BIN, APP, MASTER, home, port)


def parse_size(text):
    """`4m`, `64m`, `1g`, bytes: what `--chunk-size` takes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(text[:-1]) * units[text[-1].lower()] if text[-1].lower() in units else int(text)


def curl_put(path, url):
    out = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "-T", path, url],
                         capture_output=True, text=True).stdout.split()
    assert out[0] in ("201", "204"), out
    return float(out[1])


def main():
    work = tempfile.mkdtemp(prefix="photowall-bench-up-")
    try:
        rows = []
        big = os.path.join(work, "big.png")
        make_png(big, BIG_MB << 20)
        size = os.path.getsize(big)
        data = os.path.join(work, "pw")
        os.makedirs(data)
        pw, port = start_photowall(data)
        cli = CLI(os.path.join(work, "home"), port)
        ng, nport = start_nginx(os.path.join(work, "ng"))
        base = None
        if BASELINE:
            os.makedirs(os.path.join(work, "base"))
            bpw, bport = start_photowall(os.path.join(work, "base"), BASELINE)
            base = (bpw, bport, CLI(os.path.join(work, "basehome"), bport, BASELINE))
        baseline = {c: [] for c in CASES}
        results = {c: [] for c in CASES}
        nginx = []
        # The disk's own ceiling for bytes acknowledged only once durable, per chunk size (written in the
        # same rounds): no server can acknowledge faster than this, whatever nginx does without fsync.
        disk = {c: [] for c in CASES}
        hashing = {c[1]: [] for c in CASES}   # per checksum: the chunk size does not change the passes
        for i in range(ROUNDS):   # taken in turn, so disk drift hits both
            for c in CASES:
                os.sync()
                secs, events = cli.upload([big], "--file-only", "--chunk-size", c[0], "--checksum", c[1])
                results[c].append(size / secs / 1e6)
                name = [e for e in events if e["event"] == "uploaded"][0]["fileName"]
                api(port, "DELETE", f"/files/{name}")
                if base:
                    os.sync()
                    secs, events = base[2].upload([big], "--file-only", "--chunk-size", c[0], "--checksum", c[1])
                    baseline[c].append(size / secs / 1e6)
                    name = [e for e in events if e["event"] == "uploaded"][0]["fileName"]
                    api(base[1], "DELETE", f"/files/{name}")
            os.sync()
            nginx.append(size / curl_put(big, f"http://127.0.0.1:{nport}/upload/big{i}.bin") / 1e6)
            os.remove(os.path.join(work, "ng", "www", "upload", f"big{i}.bin"))
            for c in CASES:
                os.sync()
                disk[c].append(durable_write_mbs(work, size, parse_size(c[0])))
            for checksum in hashing:
                hashing[checksum].append(hashing_mbs(big, PASSES[checksum]))
        t = statistics.median(nginx)
        for c in CASES:
            o = statistics.median(results[c])
            rows.append((f"{BIG_MB} MiB tus upload, --chunk-size {c[0]} --checksum {c[1]}", "MB/s", o, t, o / t, GOALS.get(c)))
            if base:
                b = statistics.median(baseline[c])
                rows.append((f"  baseline binary (PhotoWall ÷ baseline: {o / b:.2f}×)", "MB/s", b, t, b / t, None))
            d = statistics.median(disk[c])
            rows.append((f"  disk ceiling: {BIG_MB} MiB written, fdatasync every {c[0]}", "MB/s", d, t, d / t, None))
            h = statistics.median(hashing[c[1]])
            passes = PASSES[c[1]]
            what = " + ".join(f"{passes.count(a)} {NAMES[a]}" for a in dict.fromkeys(passes))
            rows.append((f"  hashing ceiling: {what} pass" + ("es at once" if len(passes) > 1 else ""), "MB/s", h, t, h / t, None))
        stop(pw)
        if base:
            stop(base[0])
        ng.send_signal(signal.SIGQUIT)
        ng.wait(timeout=10)

        # 32 parallel 64 MiB uploads into a fresh server: its peak memory (BENCH_UPLOAD_PARALLEL=0 leaves it out).
        if os.environ.get("BENCH_UPLOAD_PARALLEL", "1") == "0":
            report(rows)
            return
        shutil.rmtree(data)
        os.makedirs(data)
        pw, port = start_photowall(data)
        cli = CLI(os.path.join(work, "home2"), port)
        one = os.path.join(work, "p0.png")
        make_png(one, PARALLEL_MB << 20)
        files = [one]
        for k in range(1, PARALLEL):   # hard links: distinct paths (and resume keys), one copy on disk
            f = os.path.join(work, f"p{k}.png")
            os.link(one, f)
            files.append(f)
        stop_event, peak = threading.Event(), []
        sampler = threading.Thread(target=rss_sampler, args=(pw.pid, stop_event, peak))
        sampler.start()
        secs, events = cli.upload(files, "--parallel", str(PARALLEL), "--file-only")
        stop_event.set()
        sampler.join()
        hwm = vm_status(pw.pid, "VmHWM")
        done = len([e for e in events if e["event"] == "done"])
        assert done == PARALLEL, done
        rows.append((f"{PARALLEL} x {PARALLEL_MB} MiB in parallel: total throughput", "MB/s", PARALLEL * (PARALLEL_MB << 20) / secs / 1e6,
                     float("nan"), float("nan"), None))
        rows.append((f"  server peak RSS (VmRSS sampled every 20 ms)", "MiB", peak[0] / 1024, float("nan"), float("nan"), None))
        rows.append((f"  server VmHWM (whole life, incl. start)", "MiB", hwm / 1024, float("nan"), float("nan"), None))
        stop(pw)
        report(rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(rows):
    """The table: each case beside nginx's PUT from the same run, and its goal."""
    print(f"\nUpload benchmark — loopback, median of {ROUNDS} rounds taken in turn; client, servers and disk shared. "
          "PhotoWall fsyncs every chunk before acknowledging it (tus offset = durable bytes); nginx's PUT does not fsync.")
    if BASELINE:
        print(bench_common.baseline_note(BIN, BASELINE))
    print(f"{'case':<64} {'unit':>6} {'PhotoWall':>11} {'nginx':>11} {'ratio':>7} {'goal':>7}")
    for name, unit, a, b, r, goal in rows:
        bs = "—" if b != b else f"{b:11.1f}"
        rs = "—" if r != r else f"{r:7.2f}"
        gs = "—" if goal is None else f"≥{goal:.1f}" + (" ok" if r >= goal else " MISS")
        print(f"{name:<64} {unit:>6} {a:11.1f} {bs:>11} {rs:>7} {gs:>10}")
    print("goals (issue 14): tus 4 MiB chunks + SHA-256 ≥ 0.7× nginx PUT, 64 MiB chunks without checksum ≥ 0.9×; "
          "server peak RSS during 32 parallel 64 MiB uploads < 64 MiB")


if __name__ == "__main__":
    main()
