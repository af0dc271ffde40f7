#!/usr/bin/env python3
"""Regenerates scripts/photowall.order: the release binary's functions that run (those of a server's start
first, then those of its requests, each part hottest first), for lld's --symbol-ordering-file (`make release`
links with it).

Why: the kernel maps a binary's code 64 KiB at a time around each page it faults in (fault-around), so
an idle server whose few thousand executed functions are spread over 17 MB of .text keeps about 11 MiB
of it resident. Laid out together (every Swift function in its own section, -function-sections, then
ordered by this file), the same functions fill under 5 MiB, and the request path's hot code shares pages.

How: runs the release binary under valgrind's callgrind through the benchmarks' own clients, on small
data (the API reads, a 16 MiB POST, the mixed load with sign-ups, comments, uploads and thumbnails, tus
uploads through the CLI, feed pages) and the Parse REST client tests, after a server that only starts and
stops, then lists every function of the binary that ran, by its own instruction count (callgrind's self
cost). Functions a run missed are laid out after these, as before, so a stale file costs only memory,
never correctness.

Usage: scripts/order_file.py [PHOTOWALL_BINARY]   (`make order-file`: builds, installs valgrind, runs this)
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "photowall"))
OUT = os.path.join(ROOT, "scripts", "photowall.order")
PY = os.path.join(ROOT, ".build", "venv", "bin", "python")
STOP_SECONDS = 300       # a server under callgrind that is killed before it ends writes no profile
WORKLOAD_SECONDS = 1800  # each workload took 1–4 minutes here

# Each workload with the environment that keeps it small under callgrind (about 50× slower than native).
WORKLOADS = [
    (["scripts/bench_api.py"], {"BENCH_SECONDS": "3", "BENCH_ROUNDS": "1", "BENCH_UPLOAD_MB": "16"}),
    (["scripts/bench_mixed.py"], {"BENCH_SECONDS": "4", "BENCH_MIXED_IMAGES": "3000", "BENCH_MIXED_USERS": "300",
                                  "BENCH_MIXED_HOT_COMMENTS": "50", "BENCH_MIXED_CLIENTS": "8"}),
    (["scripts/bench_uploads.py"], {"BENCH_ROUNDS": "1", "BENCH_UPLOAD_GB_MB": "16", "BENCH_CASES": "4m/sha256,4m/none",
                                    "BENCH_UPLOAD_PARALLEL": "0"}),
    (["scripts/bench_feed.py"], {"BENCH_SECONDS": "3", "BENCH_FEED_IMAGES": "3000", "BENCH_FEED_USERS": "300",
                                 "BENCH_FEED_ROUNDS": "1", "BENCH_FEED_POSTGRES": "0"}),
]


def self_costs(paths, binary_name):
    """Self instruction counts of the functions in `binary_name`, summed over callgrind outputs written
    with --compress-strings=no --compress-pos=no (every `fn=` line names its function; the cost line
    after a `calls=` line is that call's inclusive cost, not the caller's own)."""
    cost = collections.Counter()
    for path in paths:
        ours = False
        fn = None
        after_call = False
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("ob="):
                    ours = os.path.basename(line[3:].strip()) == binary_name
                elif line.startswith("fn="):
                    # callgrind marks recursion levels as name'2, name'3…, and names code without a symbol by
                    # its address (0x…) or as "(below main)": no linker can place those by name.
                    fn = re.sub(r"'\d+$", "", line[3:].strip()) if ours else None
                    if fn and fn.startswith(("0x", "(")):
                        fn = None
                    if fn:
                        cost[fn] += 0
                elif line.startswith("calls="):
                    after_call = True
                elif line[:1].isdigit() or line[:1] in "+-*":
                    if after_call:
                        after_call = False
                    elif fn:
                        parts = line.split()
                        if len(parts) >= 2:
                            cost[fn] += int(parts[1])
    return cost


def main():
    if not shutil.which("valgrind"):
        sys.exit("order_file.py: valgrind not found (`make order-file` installs it)")
    work = tempfile.mkdtemp(prefix="photowall-order-")
    try:
        # valgrind 3.19 (Debian 12) can't read the DWARF 5 this toolchain writes; the symbol table is enough.
        plain = os.path.join(work, "photowall")
        subprocess.run(["objcopy", "--strip-debug", BIN, plain], check=True)
        # What the binary finds beside itself: the thumbnail helper (`photowall thumbnail`) and the wall's files.
        for sibling in ("photowall-thumbnail", "PhotoWall_PhotoWallWeb.resources"):
            source = os.path.join(os.path.dirname(BIN), sibling)
            if os.path.isdir(source):
                shutil.copytree(source, os.path.join(work, sibling))
            elif os.path.exists(source):
                shutil.copy2(source, work)
        outs = os.path.join(work, "cg")
        os.mkdir(outs)
        wrapper = os.path.join(work, "photowall-callgrind")
        with open(wrapper, "w") as f:
            # Each process's command by its pid (exec keeps it): `photowall thumbnail` replaces itself with
            # photowall-thumbnail, so its profile stays empty by design.
            f.write(f"#!/bin/sh\necho \"$$ $1\" >> {work}/commands.log\n"
                    "exec valgrind --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no "
                    f"--compress-pos=no --callgrind-out-file={outs}/cg.%p {plain} \"$@\" 2>>{work}/valgrind.log\n")
        os.chmod(wrapper, 0o755)
        # First the server's start and stop alone: those functions go first, so that an idle server's
        # code is one run of pages; then the workloads.
        print("order_file.py: an idle server under callgrind…", flush=True)
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        from bench_common import start_photowall, stop
        server, _ = start_photowall(wrapper, os.path.join(work, "idle"), "orderapp", "order-master")
        time.sleep(5)
        stop(server, timeout=STOP_SECONDS)
        startup = self_costs([os.path.join(outs, p) for p in os.listdir(outs)], os.path.basename(plain))
        if len(startup) < 500:
            log_path = os.path.join(work, "valgrind.log")
            log = open(log_path, errors="replace").read()[-2000:] if os.path.exists(log_path) else "(none)"
            sys.exit(f"order_file.py: only {len(startup)} functions seen at start, the file is left as it was; "
                     f"the end of valgrind's log:\n{log}")
        env_all = {**os.environ, "BENCH_STOP_SECONDS": str(STOP_SECONDS)}
        failed = []
        for args, env in WORKLOADS:
            print(f"order_file.py: {' '.join(args)} under callgrind…", flush=True)
            try:
                r = subprocess.run([sys.executable, *args, wrapper], cwd=ROOT, env={**env_all, **env},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=WORKLOAD_SECONDS)
                if r.returncode != 0:
                    failed.append(f"{args[0]}: {r.stderr.strip()[-500:]}")
            except subprocess.TimeoutExpired:
                failed.append(f"{args[0]}: still running after {WORKLOAD_SECONDS} s")
        if not os.path.exists(PY):
            sys.exit(f"order_file.py: {PY} not found (`make venv`, or `make order-file`, makes it)")
        print("order_file.py: Tests/python/test_parse_rest.py under callgrind…", flush=True)
        try:
            r = subprocess.run([PY, "-m", "pytest", "-q", "-x", "Tests/python/test_parse_rest.py"], cwd=ROOT,
                               env={**env_all, "PHOTOWALL_BIN": wrapper}, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=WORKLOAD_SECONDS)
            if r.returncode != 0:
                failed.append(f"test_parse_rest.py: {r.stdout.strip()[-500:]}")
        except subprocess.TimeoutExpired:
            failed.append(f"test_parse_rest.py: still running after {WORKLOAD_SECONDS} s")
        # A process killed before it ended wrote no profile: its functions would be missing. One that
        # replaced itself by exec (`photowall thumbnail`) has none either, by design.
        commands = {}
        with open(os.path.join(work, "commands.log")) as f:
            for line in f:
                pid, _, command = line.strip().partition(" ")
                commands[pid] = command
        lost = [f"{p[3:]} ({commands.get(p[3:], '?')})" for p in os.listdir(outs)
                if os.path.getsize(os.path.join(outs, p)) == 0 and commands.get(p[3:]) != "thumbnail"]
        if lost:
            failed.append(f"processes under callgrind that ended without a profile (killed?): {', '.join(lost)}")
        if failed:
            sys.exit("order_file.py: a workload failed, the file is left as it was:\n" + "\n".join(failed))
        paths = [os.path.join(outs, p) for p in os.listdir(outs)]
        cost = self_costs(paths, os.path.basename(plain))
        if len(cost) < 1000:
            sys.exit(f"order_file.py: only {len(cost)} functions seen, the file is left as it was")
        hottest = lambda items: sorted(items, key=lambda kv: (-kv[1], kv[0]))
        ordered = hottest(startup.items()) + hottest((n, c) for n, c in cost.items() if n not in startup)
        with open(OUT + ".tmp", "w") as f:
            f.write("# lld --symbol-ordering-file for `make release`, generated by scripts/order_file.py (`make order-file`):\n"
                    f"# the {len(startup)} functions of photowall that ran while a server started and stopped, then the\n"
                    f"# {len(ordered) - len(startup)} more that ran under its workloads, each part hottest first.\n")
            for name, _ in ordered:
                f.write(name + "\n")
        os.replace(OUT + ".tmp", OUT)  # never a half-written list, should this run be stopped
        print(f"order_file.py: {len(ordered)} functions ({len(startup)} at start) from {len(paths)} processes "
              f"→ {os.path.relpath(OUT, ROOT)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
