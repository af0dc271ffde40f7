"""Starts a real `photowall serve` on a random loopback port for the Python client tests."""
import os
import re
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("PHOTOWALL_BIN", os.path.join(ROOT, ".build", "debug", "photowall"))
APP_ID = "pyapp"
MASTER_KEY = "py-master"
REST_KEY = "py-rest-key"


@pytest.fixture(scope="session")
def server():
    data = tempfile.mkdtemp(prefix="photowall-py-")
    proc = subprocess.Popen(
        [BINARY, "serve", "--port", "0", "--data-dir", data, "--app-id", APP_ID, "--master-key", MASTER_KEY,
         "--rest-key", REST_KEY, "--stop-on-stdin-eof", "--log-level", "warning"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(os.path.join(data, "server.log"), "w"), text=True)
    port = None
    for _ in range(50):
        line = proc.stdout.readline()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/parse", line)
        if m:
            port = int(m.group(1))
            break
    assert port, "server did not start"
    yield {"url": f"http://127.0.0.1:{port}/parse", "data": data}
    proc.stdin.close()
    proc.wait(timeout=15)
    shutil.rmtree(data, ignore_errors=True)
