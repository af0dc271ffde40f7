"""Shared pieces of the benchmark scripts: start and stop PhotoWall and nginx on loopback, call the API,
drive the `photowall` upload client."""
import json
import os
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request


def stat_fields(pid):
    """The fields of /proc/PID/stat after the command name (state, ppid, …; proc(5) numbers from 3)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid):
    """The CPU time (user + system) process PID has used so far, in seconds (/proc/PID/stat)."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree(pid):
    """PID and every process descended from it (an nginx master and its workers), from /proc.
    - Returns: [pid, …]."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(stat_fields(entry)[1])
            except OSError:
                continue
    tree, grew = {pid}, True
    while grew:
        grew = False
        for child, parent in parents.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grew = True
    return sorted(tree)


def start_photowall(binary, data, app, master, extra=()):
    """`photowall serve` on a free loopback port. - Returns: (process, port)."""
    p = subprocess.Popen([binary, "serve", "--port", "0", "--data-dir", data, "--app-id", app, "--master-key", master,
                          "--log-level", "warning", "--stop-on-stdin-eof",
                          # Load generators run from one address (as a proxy would); a benchmark of the
                          # per-address cap passes its own value in `extra` (the later option wins).
                          "--max-connections-per-ip", "0", *extra],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for _ in range(50):
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/parse", p.stdout.readline())
        if m:
            threading.Thread(target=p.stdout.read, daemon=True).start()
            return p, int(m.group(1))
    raise SystemExit("photowall did not start")


def link_mode(binary):
    """'static' when the binary carries the Swift runtime (`make release`), 'dynamic' when it loads
    libswiftCore.so (`swift build -c release`), None when it can't be told (no readelf)."""
    try:
        out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True).stdout
    except OSError:
        return None
    return "dynamic" if "libswiftCore" in out else "static"


def baseline_note(binary, baseline):
    """A line for a table's header naming each build's link mode, with a warning when they differ: the
    statically linked runtime calls retain/release without the PLT, so a dynamic build measures a few
    to ~20% slower than the same code built with `make release`, which a ÷ baseline ratio would
    report as the change's."""
    ours, theirs = link_mode(binary), link_mode(baseline)
    line = f"Builds: PhotoWall {ours or '?'}, baseline {theirs or '?'} linked."
    if ours and theirs and ours != theirs:
        line += " WARNING: the link modes differ, so PhotoWall ÷ baseline also measures the linking; build both with `make release`."
    return line


def stop(p, timeout=30):
    """Closes the server's stdin (it stops gracefully) and waits `timeout` seconds, or BENCH_STOP_SECONDS
    (scripts/order_file.py: a server under valgrind stops slowly), before it kills it."""
    timeout = float(os.environ.get("BENCH_STOP_SECONDS", timeout))
    p.stdin.close()
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_nginx(root):
    """nginx with 2 workers: static files from ROOT/www (JSON by default, open_file_cache, no access log)
    and WebDAV PUTs into ROOT/www/upload (bodies to a file, no fsync). - Returns: (process, port)."""
    port = free_port()
    os.makedirs(os.path.join(root, "body"), exist_ok=True)
    os.makedirs(os.path.join(root, "www", "upload"), exist_ok=True)
    conf = os.path.join(root, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes 2;
{"user root root;" if os.geteuid() == 0 else ""}
pid {root}/nginx.pid;
error_log {root}/error.log warn;
daemon off;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  open_file_cache max=100;
  client_body_temp_path {root}/body;
  default_type application/json;
  server {{
    listen 127.0.0.1:{port};
    root {root}/www;
    client_max_body_size 4g;
    location /upload/ {{ dav_methods PUT; create_full_put_path on; }}
  }}
}}
""")
    p = subprocess.Popen(["nginx", "-c", conf, "-p", root], stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/none")
        except urllib.error.HTTPError:
            return p, port
        except Exception:
            time.sleep(0.05)
    raise SystemExit("nginx did not start")


def durable_write_mbs(directory, total_bytes, sync_every=None):
    """The disk's ceiling for an upload acknowledged only once durable: writes `total_bytes` of random
    data to a new file in `directory` in 1 MiB writes, `fdatasync`ing every `sync_every` bytes (one tus
    chunk) or once at the end. - Returns: MB/s (the file is removed)."""
    path = os.path.join(directory, "durable-write-probe.bin")
    block = os.urandom(1 << 20)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        start, written, synced = time.monotonic(), 0, 0
        while written < total_bytes:
            written += os.write(fd, block[:min(len(block), total_bytes - written)])
            if sync_every and written - synced >= sync_every:
                os.fdatasync(fd)
                synced = written
        os.fdatasync(fd)
        return total_bytes / (time.monotonic() - start) / 1e6
    finally:
        os.close(fd)
        os.remove(path)


def order_file_note(binary):
    """How many of the functions scripts/photowall.order lists the binary still defines: the code layout
    that keeps the server's resident code small (Makefile, RELEASE_FLAGS) holds for those only."""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "photowall.order")) as f:
            listed = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    except OSError:
        return "Code layout: scripts/photowall.order is missing, so the code is laid out as compiled (`make order-file`)."
    try:
        out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout
    except OSError:
        return "Code layout: nm not found, so not checked against scripts/photowall.order."
    defined = {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3}
    found = len(listed & defined)
    return (f"Code layout: {found:,} of the {len(listed):,} functions scripts/photowall.order lists are in this binary "
            f"({100 * found / max(1, len(listed)):.1f}%); `make order-file` regenerates the list when that falls.")


def vm_status(pid, key):
    """A KiB figure of /proc/PID/status (`VmRSS`, `VmHWM`, ...); 0 when absent."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def rss_sampler(pid, stop_event, out):
    """Samples the process's VmRSS every 20 ms until `stop_event`; appends the peak (KiB) to `out`."""
    peak = 0
    while not stop_event.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        peak = max(peak, int(line.split()[1]))
        except FileNotFoundError:
            break
        time.sleep(0.02)
    out.append(peak)


def api(port, app, master, method, path, body=None, token=None):
    """One Parse REST call (master key unless TOKEN). - Returns: the decoded JSON answer."""
    headers = {"X-Parse-Application-Id": app, "Content-Type": "application/json"}
    if token:
        headers["X-Parse-Session-Token"] = token
    else:
        headers["X-Parse-Master-Key"] = master
    req = urllib.request.Request(f"http://127.0.0.1:{port}/parse{path}", method=method,
                                 data=json.dumps(body).encode() if body is not None else None, headers=headers)
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read() or b"{}")


class CLI:
    """The photowall client with its own config/cache directories, logged in to a bench server as a new user."""

    def __init__(self, binary, app, master, home, port, user="bench"):
        self.binary = binary
        self.env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home + "/config", XDG_CACHE_HOME=home + "/cache")
        for k in ("PHOTOWALL_SERVER", "PARSE_SERVER_APPLICATION_ID", "PHOTOWALL_PASSWORD"):
            self.env.pop(k, None)
        self.server = f"http://127.0.0.1:{port}/parse"
        api(port, app, master, "POST", "/users", {"username": user, "password": "bench-pw"})
        subprocess.run([binary, "login", user, "--password", "bench-pw", "--server", self.server, "--app-id", app],
                       env=self.env, check=True, stdout=subprocess.DEVNULL)

    def upload(self, files, *args):
        """Runs `photowall upload`. - Returns: (seconds from the first start to the last uploaded event, events)."""
        p = subprocess.Popen([self.binary, "upload", *files, "--json", *args], env=self.env, stdout=subprocess.PIPE, text=True)
        first, last, events = None, None, []
        for line in p.stdout:
            now = time.monotonic()
            e = json.loads(line)
            events.append(e)
            if e["event"] == "start" and first is None:
                first = now
            if e["event"] == "uploaded":
                last = now
        if p.wait() != 0:
            raise SystemExit(f"photowall upload failed ({p.returncode}): {[e for e in events if e['event'] == 'error']}")
        return last - first, events
