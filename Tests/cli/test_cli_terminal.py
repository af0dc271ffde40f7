"""`photowall upload` on a terminal, as people see it: the real binary on a pseudo-terminal of 80 and 120
columns against a real `photowall serve`, its output replayed on a small screen model (cursor moves,
line and screen clears) so the test sees what stays on screen.

Checks: no line is ever wider than the terminal; each finished file keeps a line with its WallImage id
(the id `photowall comment` needs, checked on the server); the batch ends with a summary; a refused file
doesn't stop the others; while the server is down the retry notice shows, and the upload finishes once
it is back; a photo already posted (or given twice) is skipped with a line saying so, `--allow-duplicate`
posts it again.
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import termios
import fcntl
import time
import urllib.request
import uuid
import zlib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("PHOTOWALL_BIN", os.path.join(ROOT, ".build", "debug", "photowall"))
APP_ID = "cliapp"
MASTER_KEY = "cli-master"


class Server:
    """`photowall serve` on a random loopback port (the same port again after `restart`)."""

    def __init__(self, data):
        self.data = data
        self.port = 0
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            [BINARY, "serve", "--port", str(self.port), "--data-dir", self.data, "--app-id", APP_ID,
             "--master-key", MASTER_KEY, "--stop-on-stdin-eof", "--log-level", "warning"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(os.path.join(self.data, "server.log"), "a"), text=True)
        for _ in range(50):
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/parse", self.proc.stdout.readline())
            if m:
                self.port = int(m.group(1))
                return
        raise AssertionError("server did not start")

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/parse"

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=15)

    def request(self, method, path, body=None, master=False):
        headers = {"X-Parse-Application-Id": APP_ID, "Content-Type": "application/json"}
        if master:
            headers["X-Parse-Master-Key"] = MASTER_KEY
        data = json.dumps(body).encode() if body is not None else None
        with urllib.request.urlopen(urllib.request.Request(self.url + path, data=data, method=method, headers=headers)) as r:
            return json.loads(r.read())


@pytest.fixture
def server():
    data = tempfile.mkdtemp(prefix="photowall-cli-")
    s = Server(data)
    yield s
    s.stop()
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def home(server):
    """A CLI home logged in to `server` as a fresh user."""
    path = tempfile.mkdtemp(prefix="photowall-cli-home-")
    name = "tty_" + uuid.uuid4().hex[:8]
    server.request("POST", "/users", {"username": name, "password": "pw"})
    r = subprocess.run([BINARY, "login", name, "--password", "pw", "--server", server.url, "--app-id", APP_ID],
                       env=environment(path), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    yield path
    shutil.rmtree(path, ignore_errors=True)


def environment(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOTOWALL_", "PARSE_SERVER_", "COLUMNS"))}
    env.update(HOME=home, XDG_CONFIG_HOME=home + "/config", XDG_CACHE_HOME=home + "/cache", TERM="xterm")
    return env


def png(path, total_bytes):
    """A 16x16 PNG padded to `total_bytes` with a private ancillary chunk (as Swift's TestFiles.paddedPNG)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\0" + bytes(v for x in range(16) for v in (x * 16, y * 16, 128)) for y in range(16))
    body = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw))
    body += chunk(b"pwPd", os.urandom(max(0, total_bytes - len(body) - 24))) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(body)
    return path


class Screen:
    """Replays terminal output: printable text, CR, LF, CSI n A (up), CSI J (clear to end), CSI 2K
    (clear line). Records any write past the last column (`overflow`)."""

    def __init__(self, columns):
        self.columns = columns
        self.rows = [""]
        self.row = 0
        self.col = 0
        self.overflow = []

    def feed(self, text):
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\x1b":
                m = re.match(r"\x1b\[(\d*)([A-Za-z])", text[i:])
                assert m, repr(text[i:i + 10])
                n, op = int(m.group(1) or 1), m.group(2)
                if op == "A":
                    self.row = max(0, self.row - n)
                elif op == "J":
                    self.rows[self.row] = self.rows[self.row][:self.col]
                    del self.rows[self.row + 1:]
                elif op == "K":
                    self.rows[self.row] = ""
                i += len(m.group(0))
                continue
            if c == "\r":
                self.col = 0
            elif c == "\n":
                self.row += 1
                self.col = 0
                while len(self.rows) <= self.row:
                    self.rows.append("")
            else:
                line = self.rows[self.row].ljust(self.col)
                self.rows[self.row] = line[:self.col] + c + line[self.col + 1:]
                self.col += 1
                if self.col > self.columns - 1:
                    self.overflow.append(self.rows[self.row])
            i += 1

    @property
    def text(self):
        return "\n".join(r.rstrip() for r in self.rows)


class Terminal:
    """The binary on a pseudo-terminal of `columns` x 40 (stdout); stderr to a pipe."""

    def __init__(self, args, home, columns):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        self.proc = subprocess.Popen([BINARY] + args, stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE,
                                     env=environment(home), text=True)
        os.close(slave)
        self.screen = Screen(columns)
        self.raw = ""

    def read_until(self, pattern, timeout=60):
        """Reads output until `pattern` (a regex) matches what was written so far, or the process ends."""
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.raw):
            if time.monotonic() > deadline:
                raise AssertionError(f"no {pattern!r} in output:\n{self.screen.text}")
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:  # EIO: the process closed the terminal
                    chunk = ""
                if not chunk:
                    break
                self.raw += chunk
                self.screen.feed(chunk)
        return re.search(pattern, self.raw)

    def finish(self, timeout=120):
        self.read_until(r"\Z.", timeout)  # everything up to the end
        code = self.proc.wait(timeout=timeout)
        stderr = self.proc.stderr.read()
        os.close(self.master)
        return code, stderr


@pytest.mark.parametrize("columns", [80, 120])
def test_finished_lines_keep_the_id_and_the_batch_ends_with_a_summary(server, home, columns):
    files = [png(os.path.join(home, "a_holiday_photo_with_a_rather_long_descriptive_name_from_the_camera_0001.png"), 2 << 20),
             png(os.path.join(home, "b.png"), 300_000)]
    gif = os.path.join(home, "c.gif")
    with open(gif, "wb") as f:
        f.write(b"GIF89a" + os.urandom(500))
    t = Terminal(["upload", files[0], gif, files[1], "--chunk-size", "256k", "--comment", "tty"], home, columns)
    code, stderr = t.finish()
    screen = t.screen.text
    assert t.screen.overflow == [], t.screen.overflow
    assert code == 3, stderr  # the refused GIF's exit code, after the others were posted
    lines = [l for l in screen.splitlines() if l]
    done = [l for l in lines if " done: WallImage " in l]
    assert len(done) == 2, screen
    ids = [re.search(r"done: WallImage (\w+)", l).group(1) for l in done]
    for image_id in ids:
        image = server.request("GET", f"/classes/WallImage/{image_id}", master=True)
        assert image["objectId"] == image_id
    assert any(l.startswith("b.png  done: WallImage ") for l in done), done
    # The long name was shortened (keeping its end), never the result.
    long_line = next(l for l in done if not l.startswith("b.png"))
    assert "…" in long_line and long_line.split("  done:")[0].endswith("0001.png"), long_line
    assert re.fullmatch(r"2 uploaded, 1 refused \(unsupported type\); 2\.\d MiB in \d+\.\d s", lines[-1]), lines[-1]
    assert stderr == f"photowall upload: {gif}: unsupported type (GIF); only JPEG, PNG, WebP, HEIC and AVIF can be posted\n"


@pytest.mark.parametrize("columns", [80, 120])
def test_the_retry_notice_shows_while_the_server_is_down(server, home, columns):
    photo = png(os.path.join(home, "big.png"), 12 << 20)
    t = Terminal(["upload", photo, "--chunk-size", "64k"], home, columns)
    t.read_until(r"big\.png +\[#*-*\] +[1-9][\d.]* [KM]iB")  # bytes are moving
    server.kill()
    t.read_until(r"server unreachable, retrying in [\d.]+ s \(attempt \d+\)")
    notice = [l for l in t.screen.text.splitlines() if "retrying in" in l]
    assert notice and notice[-1].startswith("big.png  "), t.screen.text
    server.start()  # the same port and data: the upload resumes
    code, stderr = t.finish()
    assert t.screen.overflow == [], t.screen.overflow
    assert code == 0, stderr
    lines = [l for l in t.screen.text.splitlines() if l]
    assert re.fullmatch(r"big\.png  done: WallImage \w{10}", lines[-2]), lines
    assert re.fullmatch(r"1 uploaded; 12\.0 MiB in \d+\.\d s", lines[-1]), lines[-1]


def test_giving_up_says_how_to_resume(server, home):
    photo = png(os.path.join(home, "gone.png"), 12 << 20)
    t = Terminal(["upload", photo, "--chunk-size", "64k", "--max-retries", "2"], home, 80)
    t.read_until(r"gone\.png +\[#*-*\] +[1-9][\d.]* [KM]iB")
    server.kill()
    code, stderr = t.finish()
    assert code == 5, stderr
    assert t.screen.overflow == [], t.screen.overflow
    assert "server unreachable, retrying in" in t.raw
    lines = [l for l in t.screen.text.splitlines() if l]
    assert lines[-2] == "gone.png  failed: server unreachable", lines  # the whole message is on stderr
    assert re.fullmatch(r"0 uploaded, 1 failed \(server unreachable\); 0 B in \d+\.\d s", lines[-1]), lines[-1]
    assert stderr == (f"photowall upload: {photo}: server unreachable at {server.url} (gave up after 3 attempts): "
                      "check that it runs (photowall serve) and run the same command again to resume\n"
                      "photowall upload: run the same command again to resume\n")


def wall_images(server):
    """Every WallImage on the server (master key), oldest first."""
    return server.request("GET", "/classes/WallImage?order=createdAt&limit=1000", master=True)["results"]


@pytest.mark.parametrize("columns", [80, 120])
def test_a_photo_already_posted_is_skipped_and_a_file_given_twice_is_posted_once(server, home, columns):
    photo = png(os.path.join(home, "dup.png"), 200_000)
    first = Terminal(["upload", photo], home, columns)
    code, stderr = first.finish()
    assert code == 0, stderr
    [posted] = wall_images(server)

    # Again, with a new photo given twice: the posted one and the second copy are skipped, the new one posted.
    fresh = png(os.path.join(home, "fresh.png"), 100_000)
    copy = os.path.join(home, "copy.png")
    shutil.copyfile(fresh, copy)
    t = Terminal(["upload", photo, fresh, copy], home, columns)
    code, stderr = t.finish()
    assert code == 0, stderr  # skipping is what was asked for
    assert stderr == ""
    assert t.screen.overflow == [], t.screen.overflow
    lines = [l for l in t.screen.text.splitlines() if l]
    day = posted["createdAt"][:10]
    hint = f"dup.png  already posted as WallImage {posted['objectId']} on {day}"
    # The whole line where it fits; at 80 columns the hint goes, never the id or the date.
    assert (hint + " (--allow-duplicate posts it again)" if columns == 120 else hint) in lines, lines
    assert f"copy.png  same as {fresh} (posted once)" in lines, lines
    assert any(l.startswith("fresh.png  done: WallImage ") for l in lines), lines
    assert re.fullmatch(r"1 uploaded, 2 skipped \(already posted, given twice\); 97\.\d KiB in \d+\.\d s", lines[-1]), lines[-1]
    images = wall_images(server)
    assert [i["objectId"] for i in images][:1] == [posted["objectId"]] and len(images) == 2, images

    # --json: an event per skipped file, and the count in the summary.
    r = subprocess.run([BINARY, "upload", photo, "--json"], env=environment(home), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    events = [json.loads(l) for l in r.stdout.splitlines()]
    assert events[0] == {"event": "skipped", "file": photo, "reason": "duplicate", "objectId": posted["objectId"],
                         "createdAt": posted["createdAt"],
                         "message": f"already posted as WallImage {posted['objectId']} on {day} (--allow-duplicate posts it again)"}
    assert events[-1]["event"] == "summary" and events[-1]["skipped"] == 1 and events[-1]["uploaded"] == 0, events[-1]
    assert len(wall_images(server)) == 2

    # --allow-duplicate posts it again.
    r = subprocess.run([BINARY, "upload", photo, "--allow-duplicate"], env=environment(home), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"1 uploaded; 195\.\d KiB in \d+\.\d s", r.stdout.splitlines()[-1]), r.stdout
    images = wall_images(server)
    assert len(images) == 3 and images[-1]["image"]["name"] != posted["image"]["name"], images
