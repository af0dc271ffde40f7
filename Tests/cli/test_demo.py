"""`make run`'s script (scripts/run-demo.sh) with the built binary: a busy port is named before anything
starts, the banner comes last, and Ctrl-C (through a pseudo-terminal, as a person presses it) or a
killed script leaves no server behind."""
import os
import pty
import re
import select
import signal
import socket
import subprocess
import tempfile
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("PHOTOWALL_BIN", os.path.join(ROOT, ".build", "debug", "photowall"))
SCRIPT = os.path.join(ROOT, "scripts", "run-demo.sh")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def environment(data, port, fb_port):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOTOWALL_", "PARSE_SERVER_", "PORT"))}
    env.update(PHOTOWALL_DATA_DIR=data, PORT=str(port), PHOTOWALL_FACEBOOK_PORT=str(fb_port))
    return env


@pytest.fixture
def seeded():
    """A small demo wall already loaded (so the script skips its first-run seeding)."""
    data = tempfile.mkdtemp(prefix="photowall-demo-")
    subprocess.run([BINARY, "seed-demo", "--data-dir", data, "--users", "3", "--images", "3", "--friends-per-user", "1"],
                   cwd=ROOT, check=True, capture_output=True)
    yield data
    subprocess.run(["rm", "-rf", data])


def children(pid):
    """Processes whose parent is `pid` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    out.append(int(entry))
            except OSError:
                pass
    return out


def command(pid):
    """A process's argv (from /proc; empty once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def start(data, port, fb_port):
    """The script on a pseudo-terminal. - Returns: (pid, master fd, output until the banner)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(SCRIPT, [SCRIPT, BINARY], environment(data, port, fb_port))
    out = b""
    deadline = time.monotonic() + 60
    while b"Ctrl-C stops it" not in out or not out.rstrip().endswith(b"port)"):
        assert time.monotonic() < deadline, out.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            out += os.read(fd, 65536)
    return pid, fd, out.decode()


def test_a_busy_port_is_named_before_anything_starts():
    data = os.path.join(tempfile.mkdtemp(prefix="photowall-demo-"), "Storage")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run([SCRIPT, BINARY], env=environment(data, port, free_port()), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr == (f"make run: port {port} is busy (something, perhaps another make run, listens on 127.0.0.1:{port}).\n"
                        "          Stop it, or choose another port: make run ARGS='--port 8080'\n")
    assert r.stdout == ""
    assert not os.path.exists(data), "nothing was seeded or started"


@pytest.mark.parametrize("how", ["ctrl-c", "kill -9"])
def test_the_banner_comes_last_and_every_exit_stops_the_servers(seeded, how):
    port, fb_port = free_port(), free_port()
    pid, fd, out = start(seeded, port, fb_port)
    banner = out[out.index("PhotoWall demo is running"):]
    assert f"http://127.0.0.1:{port}/" in banner
    assert "login --facebook --as" in banner and f"--server http://127.0.0.1:{port}/parse" in banner
    assert f"Data          {seeded}/" in banner
    assert "make run ARGS='--log-level info'" in banner
    assert "master" not in out.lower(), "the master-key example goes to the log, not the screen"
    # The script's servers: its children running the binary (a `cat` printing the banner may not be reaped
    # yet when the banner is read, on a loaded machine).
    servers = [p for p in children(pid) if command(p)[:1] == [BINARY]]
    assert len(servers) == 2 and all(alive(p) for p in servers), [command(p) for p in children(pid)]
    if how == "ctrl-c":
        os.write(fd, b"\x03")
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 130
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    deadline = time.monotonic() + 20
    while any(alive(p) for p in servers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in servers), "a server outlived the script"
    os.close(fd)
    # A server reads the script's FIFO: once it sees the end it shuts down gracefully, so its port may
    # answer for a moment after the process the script started is gone.
    def answers(p):
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", p)) == 0
    while any(answers(p) for p in (port, fb_port)) and time.monotonic() < deadline + 20:
        time.sleep(0.2)
    for p in (port, fb_port):
        assert not answers(p), f"port {p} still answers"
