"""Starts the real `photowall mock-facebook` and `photowall serve` (random loopback ports, temporary data)
and headless Chromium through Selenium, for the browser wall's tests."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.request

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("PHOTOWALL_BIN", os.path.join(ROOT, ".build", "debug", "photowall"))
FIXTURE = os.path.join(ROOT, "Samples", "facebook", "users.json")
ARTIFACTS = os.path.join(ROOT, ".build", "artifacts", "browser")
FB_APP_ID = "1234567890123456"
FB_SECRET = "browser-test-secret"
APP_ID = "photowall"
MASTER_KEY = "browser-master"
PHONE = (375, 812)
DESKTOP = (1280, 900)


def _start(args, pattern, log_path):
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(log_path, "w"), text=True, cwd=ROOT)
    for _ in range(50):
        line = proc.stdout.readline()
        m = re.search(pattern, line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise AssertionError(f"{args[1]} did not start; see {log_path}")


def _stop(proc):
    proc.stdin.close()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


def start_server(data, fb_port, port=0):
    """`photowall serve` on `port` (0: any free one) with its data in `data` → (process, port); stop it with `stop`."""
    return _start([BINARY, "serve", "--port", str(port), "--data-dir", data, "--app-id", APP_ID, "--master-key", MASTER_KEY,
                   "--facebook-url", f"http://127.0.0.1:{fb_port}/v19.0", "--facebook-app-id", FB_APP_ID,
                   "--facebook-app-secret", FB_SECRET, "--log-level", "warning", "--stop-on-stdin-eof"],
                  r"listening on http://127\.0\.0\.1:(\d+)/parse", os.path.join(data, f"server-{port}.log" if port else "server.log"))


stop = _stop


@pytest.fixture(scope="session")
def stack():
    """{"base": "http://127.0.0.1:PORT", "api": ".../parse", "facebook": ..., "data": dir} with both servers up."""
    data = tempfile.mkdtemp(prefix="photowall-browser-")
    shutil.rmtree(ARTIFACTS, ignore_errors=True)  # only this run's screenshots
    os.makedirs(ARTIFACTS, exist_ok=True)
    fb, fb_port = _start([BINARY, "mock-facebook", "--port", "0", "--fixture", FIXTURE, "--app-id", FB_APP_ID,
                          "--app-secret", FB_SECRET, "--log-level", "warning", "--stop-on-stdin-eof"],
                         r"listening on http://127\.0\.0\.1:(\d+)", os.path.join(data, "mock-facebook.log"))
    try:
        srv, port = start_server(data, fb_port)
    except BaseException:
        _stop(fb)
        raise
    yield {"base": f"http://127.0.0.1:{port}", "api": f"http://127.0.0.1:{port}/parse",
           "facebook": f"http://127.0.0.1:{fb_port}", "fb_port": fb_port, "data": data}
    _stop(srv)
    _stop(fb)
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def browser():
    """A factory: browser((w, h)) → a headless Chromium with that window; all are quit after the test."""
    drivers = []

    def make(size):
        o = webdriver.ChromeOptions()
        o.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={size[0]},{size[1]}",
                  "--no-first-run", "--disable-extensions", "--lang=en-US"):
            o.add_argument(a)
        o.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        d = webdriver.Chrome(options=o, service=Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")))
        d.set_window_size(*size)
        drivers.append(d)
        return d

    yield make
    for d in drivers:
        d.quit()


def fixture_users():
    with open(FIXTURE) as f:
        return json.load(f)["users"]


def rest(stack, method, path, body=None, *, session=None, master=True, headers=None, raw=None):
    """One call to the Parse API; returns (status, json or None, headers)."""
    h = {"X-Parse-Application-Id": APP_ID}
    if master:
        h["X-Parse-Master-Key"] = MASTER_KEY
    if session:
        h["X-Parse-Session-Token"] = session
    data = None
    if raw is not None:
        data = raw
    elif body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    url = path if path.startswith("http") else stack["api"] + path
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            text = r.read()
            return r.status, (json.loads(text) if text else None), dict(r.headers)
    except urllib.error.HTTPError as e:
        text = e.read()
        return e.code, (json.loads(text) if text else None), dict(e.headers)
