#!/usr/bin/env python3
"""File store benchmark (issue 6, item 2), on loopback, in one run: upload MB/s of a 256 MiB file into
the filesystem store and into the S3 store (`--files s3://…` on a throw-away SeaweedFS from
scripts/s3.sh), both as one `POST /parse/files/NAME` (curl --data-binary) and as a resumable tus upload
(`photowall upload --file-only`, 8 MiB chunks with SHA-256; on S3 each chunk becomes multipart parts
and a tail, see S3UploadParts), beside `curl --aws-sigv4 -T` of the same file straight into SeaweedFS
(the peer: what the S3 server takes without PhotoWall in between).
Rounds are taken in turn; the table shows the median MB/s with the range.

Usage: bench_s3.py PHOTOWALL_BINARY    Environment: BENCH_ROUNDS (default 3), BENCH_S3_MB (default 256).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import CLI, start_photowall, stop  # noqa: E402

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/photowall")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
MB = int(os.environ.get("BENCH_S3_MB", "256"))
APP, MASTER = "benchapp", "bench-master"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def s3_env():
    out = subprocess.run([os.path.join(ROOT, "scripts/s3.sh"), "start"], check=True, capture_output=True, text=True).stdout
    env = {}
    for line in out.splitlines():
        for word in line.removeprefix("export ").split(" "):
            k, _, v = word.partition("=")
            env[k] = v.strip("'")
    return env


def timed(cmd, env=None):
    t = time.monotonic()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip().endswith(("200", "201")):
        raise SystemExit(f"upload failed: {r.stdout[-300:]} {r.stderr[-300:]}")
    return time.monotonic() - t


def main():
    s3 = s3_env()
    env = dict(os.environ, **s3)
    url = s3["PHOTOWALL_TEST_S3"]
    endpoint = url.split("endpoint=")[1].split("&")[0]
    bucket = url[len("s3://"):].split("?")[0]
    tmp = tempfile.mkdtemp(prefix="photowall-bench-s3-")
    servers = []
    try:
        blob = os.path.join(tmp, "blob.bin")
        with open(blob, "wb") as f:
            for _ in range(MB):
                f.write(os.urandom(1 << 20))
        limit = ["--max-upload-size", f"{MB + 1}mb"]
        fs, fs_port = start_photowall(BIN, os.path.join(tmp, "fs"), APP, MASTER, limit)
        servers.append(fs)
        os.environ.update(s3)  # the S3 server reads the credentials from its environment
        s3p, s3_port = start_photowall(BIN, os.path.join(tmp, "s3"), APP, MASTER, limit + ["--files", url + "&prefix=bench/"])
        servers.append(s3p)

        def post(port):
            return ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", f"X-Parse-Application-Id: {APP}",
                    "-H", f"X-Parse-Master-Key: {MASTER}", "-H", "Content-Type: application/octet-stream",
                    "--data-binary", f"@{blob}", f"http://127.0.0.1:{port}/parse/files/bench.bin"]
        peer = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:s3",
                "--user", f"{s3['AWS_ACCESS_KEY_ID']}:{s3['AWS_SECRET_ACCESS_KEY']}", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                "-T", blob, f"{endpoint}/{bucket}/peer/bench.bin"]
        fs_cli = CLI(BIN, APP, MASTER, os.path.join(tmp, "home-fs"), fs_port)
        s3_cli = CLI(BIN, APP, MASTER, os.path.join(tmp, "home-s3"), s3_port)

        def tus(cli):
            return lambda: cli.upload([blob], "--file-only", "--chunk-size", "8m", "--checksum", "sha256")[0]
        cases = [("PhotoWall POST /files → filesystem store", lambda: timed(post(fs_port), env)),
                 ("PhotoWall POST /files → S3 store (SeaweedFS)", lambda: timed(post(s3_port), env)),
                 ("PhotoWall tus, 8 MiB chunks → filesystem store", tus(fs_cli)),
                 ("PhotoWall tus, 8 MiB chunks → S3 multipart (SeaweedFS)", tus(s3_cli)),
                 ("curl -T straight into SeaweedFS (peer)", lambda: timed(peer, env))]
        times = {name: [] for name, _ in cases}
        for _ in range(ROUNDS):
            for name, run in cases:
                times[name].append(run())
        print(f"\n### {MB} MiB file upload, MB/s (median of {ROUNDS}, range), loopback, one run\n")
        print("| path | MB/s | range |")
        print("|---|---:|---:|")
        size = MB * 1048576 / 1e6
        for name, _ in cases:
            rates = sorted(size / t for t in times[name])
            print(f"| {name} | {statistics.median(rates):.0f} | {rates[0]:.0f}–{rates[-1]:.0f} |")
    finally:
        for p in servers:
            stop(p)
        subprocess.run([os.path.join(ROOT, "scripts/s3.sh"), "stop"])
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
