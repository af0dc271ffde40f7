"""Parse LiveQuery at ws://HOST/parse with a real WebSocket client (`websockets`, PyPI, pinned in the Makefile).

A real `photowall serve` (SQLite) and a real `photowall mock-facebook` for the friends. No timed assertions:
"nothing arrives" is checked with a marker: after the action under test, the master key creates a `LiveMarker`
every client subscribes to, and each client's messages up to that marker's `create` are what the action sent it
(a client's events are delivered in the order the writes were committed).
"""
import base64
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from conftest import APP_ID, BINARY, MASTER_KEY, REST_KEY, ROOT

FB_APP_ID = "1234567890123456"
FB_SECRET = "test-app-secret"


def start(args, pattern):
    data = tempfile.mkdtemp(prefix="photowall-live-")
    proc = subprocess.Popen([BINARY] + args + ["--stop-on-stdin-eof", "--log-level", "warning"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(os.path.join(data, "stderr.log"), "w"), text=True)
    for _ in range(50):
        m = re.search(pattern, proc.stdout.readline())
        if m:
            return proc, data, m.group(1)
    raise AssertionError("did not start: " + " ".join(args))


@pytest.fixture(scope="module")
def live():
    fb, fb_dir, fb_url = start(["mock-facebook", "--port", "0", "--app-id", FB_APP_ID, "--app-secret", FB_SECRET,
                                "--no-appsecret-proof"], r"listening on (http://127\.0\.0\.1:\d+)")
    data = tempfile.mkdtemp(prefix="photowall-live-")
    srv, _, port = start(["serve", "--port", "0", "--data-dir", data, "--app-id", APP_ID, "--master-key", MASTER_KEY,
                          "--rest-key", REST_KEY, "--facebook-url", fb_url + "/v19.0", "--facebook-app-id", FB_APP_ID,
                          "--facebook-app-secret", FB_SECRET, "--friend-sync-ttl", "1"],
                         r"listening on http://127\.0\.0\.1:(\d+)/parse")
    yield {"port": int(port), "url": f"http://127.0.0.1:{port}/parse", "ws": f"ws://127.0.0.1:{port}/parse", "fb": fb_url}
    for p in (srv, fb):
        p.stdin.close()
        p.wait(timeout=20)
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(fb_dir, ignore_errors=True)


def rest(live, method, path, body=None, session=None, master=False, raw=None, content_type="application/json"):
    headers = {"X-Parse-Application-Id": APP_ID, "X-Parse-REST-API-Key": REST_KEY, "Content-Type": content_type}
    if session:
        headers["X-Parse-Session-Token"] = session
    if master:
        headers["X-Parse-Master-Key"] = MASTER_KEY
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(live["url"] + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def fixture_users():
    with open(os.path.join(ROOT, "Samples", "facebook", "users.json")) as f:
        users = {u["id"]: u for u in json.load(f)["users"]}
    return users


def fb_login(live, fb_id):
    req = urllib.request.Request(live["fb"] + "/__control/login", data=json.dumps({"user_id": fb_id}).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        token = json.loads(r.read())["access_token"]
    status, body = rest(live, "POST", "/users", {"authData": {"facebook": {
        "id": fb_id, "access_token": token, "expiration_date": "2027-01-01T00:00:00.000Z"}}})
    assert status in (200, 201), body
    return body["objectId"], body["sessionToken"]


class Client:
    """One LiveQuery connection; `recv` returns the next JSON message."""

    def __init__(self, live, do_connect=True, **connect):
        self.ws = ws_connect(live["ws"], open_timeout=10, max_size=2 ** 24)
        if do_connect:
            self.send({"op": "connect", "applicationId": APP_ID, "restAPIKey": REST_KEY, **connect})
            self.connected = self.recv()

    def send(self, message):
        self.ws.send(message if isinstance(message, str) else json.dumps(message))

    def recv(self):
        return json.loads(self.ws.recv(timeout=20))

    def subscribe(self, request_id, class_name, where=None, **extra):
        query = {"className": class_name, "where": where or {}}
        query.update({k: v for k, v in extra.items() if k in ("keys", "watch", "fields")})
        message = {"op": "subscribe", "requestId": request_id, "query": query}
        if "sessionToken" in extra:
            message["sessionToken"] = extra["sessionToken"]
        self.send(message)
        reply = self.recv()
        assert reply["op"] == "subscribed" and reply["requestId"] == request_id, reply
        return reply

    def until_marker(self, marker_id):
        """Messages up to (not including) the marker's create event."""
        got = []
        while True:
            m = self.recv()
            if m.get("op") == "create" and m["object"]["className"] == "LiveMarker" and m["object"]["objectId"] == marker_id:
                return got
            got.append(m)

    def close(self):
        self.ws.close()


def marker(live):
    status, body = rest(live, "POST", "/classes/LiveMarker", {"n": 1}, master=True)
    assert status == 201, body
    return body["objectId"]


def test_handshake_refusals(live):
    def get(headers):
        c = http.client.HTTPConnection("127.0.0.1", live["port"], timeout=10)
        c.request("GET", "/parse", headers=headers)
        r = c.getresponse()
        r.read()
        c.close()
        return r
    assert get({}).status == 404
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": base64.b64encode(b"0123456789abcdef").decode()}
    r = get({**upgrade, "Sec-WebSocket-Version": "8"})
    assert r.status == 426 and r.getheader("Sec-WebSocket-Version") == "13"
    assert get({**upgrade, "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "short"}).status == 400
    # RFC 6455 §1.3's example key and answer, on the wire.
    s, _, head = raw_upgrade(live)
    assert b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head
    s.close()


def test_protocol_errors(live):
    c = Client(live, do_connect=False)
    c.send({"op": "subscribe", "requestId": 1, "query": {"className": "LiveThing", "where": {}}})
    assert c.recv() == {"op": "error", "code": 2, "reconnect": True, "requestId": None,
                        "error": "Can not find this client, make sure you connect to server before subscribing"}
    c.send({"op": "unsubscribe", "requestId": 1})
    assert c.recv()["error"] == "Can not find this client, make sure you connect to server before unsubscribing"
    for bad, message in [({"requestId": 1}, "Missing required property: op"),
                         ({"op": "find"}, 'No enum match for: "find"'),
                         ({"op": "connect"}, "Missing required property: applicationId"),
                         ({"op": "connect", "applicationId": APP_ID, "color": "red"}, "Additional properties not allowed: color"),
                         ("[1]", "Invalid type: array (expected object)"),
                         ("{not json", "Invalid JSON")]:
        c.send(bad)
        assert c.recv() == {"op": "error", "code": 1, "reconnect": True, "requestId": None, "error": message}
    c.send({"op": "connect", "applicationId": "someone-else"})
    assert c.recv() == {"op": "error", "code": 4, "reconnect": True, "requestId": None, "error": "Key in request is not valid"}
    c.send({"op": "connect", "applicationId": APP_ID, "masterKey": "guess"})
    assert c.recv()["code"] == 4
    c.send({"op": "connect", "applicationId": APP_ID, "restAPIKey": "wrong"})
    assert c.recv()["code"] == 4
    c.send({"op": "connect", "applicationId": APP_ID, "restAPIKey": REST_KEY, "sessionToken": "r:" + "0" * 32})
    assert c.recv() == {"op": "error", "code": 209, "reconnect": False, "requestId": None, "error": "Invalid session token"}
    c.send({"op": "connect", "applicationId": APP_ID, "restAPIKey": REST_KEY, "installationId": "inst-1"})
    connected = c.recv()
    assert connected["op"] == "connected" and connected["installationId"] == "inst-1"
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", connected["clientId"])
    for query, message in [({"className": "LiveThing"}, "Missing required property: where"),
                           ({"className": "LiveThing", "where": {}, "keys": []}, "Array is too short (0), minimum 1 at keys"),
                           ({"className": "LiveThing", "where": {}, "watch": ["a", "a"]}, "Array items are not unique at watch"),
                           ({"className": "LiveThing", "where": {}, "limit": 3}, "Additional properties not allowed: limit")]:
        c.send({"op": "subscribe", "requestId": 7, "query": query})
        assert c.recv() == {"op": "error", "code": 1, "reconnect": True, "requestId": None, "error": message}
    c.send({"op": "subscribe", "requestId": "7", "query": {"className": "LiveThing", "where": {}}})
    assert c.recv()["error"] == "Invalid type: string (expected number) at requestId"
    # Errors of a well-formed subscription carry its requestId.
    c.send({"op": "subscribe", "requestId": 8, "query": {"className": "bad class!", "where": {}}})
    e = c.recv()
    assert (e["code"], e["requestId"], e["reconnect"]) == (103, 8, False)
    c.send({"op": "subscribe", "requestId": 9, "query": {"className": "_User", "where": {"authData": {"$exists": True}}}})
    e = c.recv()
    assert (e["code"], e["requestId"]) == (119, 9)
    c.send({"op": "subscribe", "requestId": 10, "query": {"className": "LiveThing", "where": {}}, "sessionToken": "r:" + "1" * 32})
    assert c.recv() == {"op": "error", "code": 209, "reconnect": False, "requestId": 10, "error": "Invalid session token"}
    c.send({"op": "unsubscribe", "requestId": 99})
    e = c.recv()
    assert (e["code"], e["requestId"]) == (2, 99)
    assert e["error"] == (f"Cannot find subscription with clientId {connected['clientId']} subscriptionId 99. "
                          "Make sure you subscribe to live query server before unsubscribing.")
    c.close()


def test_events_keys_watch_update_unsubscribe(live):
    c = Client(live)
    assert c.connected["op"] == "connected"
    c.subscribe(1, "LiveThing", {"score": {"$gt": 10}}, keys=["score"])
    c.subscribe(2, "LiveThing", {}, fields=["name"], watch=["name"])
    c.subscribe(3, "LiveMarker")
    _, made = rest(live, "POST", "/classes/LiveThing", {"name": "a", "score": 5, "secret": "s"}, master=True)
    oid = made["objectId"]
    rest(live, "PUT", f"/classes/LiveThing/{oid}", {"score": 11}, master=True)   # 1: enter; 2: watch says no
    rest(live, "PUT", f"/classes/LiveThing/{oid}", {"name": "b"}, master=True)   # 1: update; 2: update
    rest(live, "PUT", f"/classes/LiveThing/{oid}", {"score": 3}, master=True)    # 1: leave
    rest(live, "DELETE", f"/classes/LiveThing/{oid}", master=True)               # 2: delete
    got = c.until_marker(marker(live))
    seen = [(m["op"], m["requestId"]) for m in got]
    assert seen == [("create", 2), ("enter", 1), ("update", 1), ("update", 2), ("leave", 1), ("delete", 2)]
    create, enter, update1, update2, leave, delete = got
    base = {"__type", "className", "objectId", "createdAt", "updatedAt"}  # (no ACL set: none shown)
    assert set(create["object"]) == base | {"name"} and create["object"]["name"] == "a" and "original" not in create
    assert create["object"]["className"] == "LiveThing" and create["clientId"] == c.connected["clientId"]
    assert set(enter["object"]) == base | {"score"} and enter["object"]["score"] == 11 and enter["original"]["score"] == 5
    assert update1["original"]["score"] == 11 and update2["object"]["name"] == "b" and update2["original"]["name"] == "a"
    assert leave["object"]["score"] == 3 and leave["original"]["score"] == 11
    assert delete["object"]["objectId"] == oid and "original" not in delete
    # update: a new query for the same requestId (answered `subscribed`), then unsubscribe.
    c.send({"op": "update", "requestId": 1, "query": {"className": "LiveThing", "where": {"score": {"$lt": 0}}}})
    assert c.recv()["op"] == "subscribed"
    c.send({"op": "unsubscribe", "requestId": 2})
    assert c.recv() == {"op": "unsubscribed", "clientId": c.connected["clientId"], "requestId": 2}
    rest(live, "POST", "/classes/LiveThing", {"score": 50}, master=True)
    # through /batch: the same write path, the same event
    status, body = rest(live, "POST", "/batch", {"requests": [{"method": "POST", "path": "/parse/classes/LiveThing",
                                                               "body": {"score": -1}}]}, master=True)
    assert status == 200 and "success" in body[0], body
    got = c.until_marker(marker(live))
    assert [(m["op"], m["requestId"], m["object"]["score"]) for m in got] == [("create", 1, -1)]
    c.close()


def raw_upgrade(live, small_window=False):
    """A WebSocket opened by hand with RFC 6455's example key. - Returns: the socket, the bytes after the 101's
    head, and the head. `small_window`: a 4 KiB receive buffer (set before connecting)."""
    s = socket.socket()
    if small_window:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect(("127.0.0.1", live["port"]))
    s.sendall(b"GET /parse HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(4096)
    assert head.startswith(b"HTTP/1.1 101")
    return s, head.split(b"\r\n\r\n", 1)[1], head


@pytest.fixture(scope="module")
def pinging():
    """A server that pings every second (the main one keeps the default 10 s: a client that reads nothing
    for a while, as the slow consumer does, would be dropped for its missed pongs)."""
    data = tempfile.mkdtemp(prefix="photowall-live-")
    srv, _, port = start(["serve", "--port", "0", "--data-dir", data, "--app-id", APP_ID, "--master-key", MASTER_KEY,
                          "--rest-key", REST_KEY, "--live-ping-interval", "1", "--session-length", "3"], r"listening on http://127\.0\.0\.1:(\d+)/parse")
    yield {"port": int(port), "ws": f"ws://127.0.0.1:{port}/parse"}
    srv.stdin.close()
    srv.wait(timeout=20)
    shutil.rmtree(data, ignore_errors=True)


def test_pings_and_dropping_silent_peers(pinging):
    # A peer that answers the pings stays; one that never answers is dropped.
    live = pinging
    c = Client(live)
    time.sleep(3.5)
    c.subscribe(1, "LiveThing")
    c.close()
    s, data, _ = raw_upgrade(live)
    while True:
        try:
            chunk = s.recv(4096)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    assert data.startswith(b"\x89\x00")  # a ping, unanswered: then the end of the connection
    s.close()


def masked(text):
    payload, mask = text.encode(), os.urandom(4)
    n = len(payload)
    head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big"))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class FrameReader:
    def __init__(self, sock, pending=b""):
        self.sock, self.buf = sock, pending

    def take(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def frame(self):
        b0, b1 = self.take(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(self.take(2), "big")
        elif n == 127:
            n = int.from_bytes(self.take(8), "big")
        return b0 & 0x0F, self.take(n)


def test_slow_consumer_is_closed_1008_and_writers_go_on(live):
    s, pending, _ = raw_upgrade(live, small_window=True)
    reader = FrameReader(s, pending)
    s.sendall(masked(json.dumps({"op": "connect", "applicationId": APP_ID, "restAPIKey": REST_KEY})))
    s.sendall(masked(json.dumps({"op": "subscribe", "requestId": 1, "query": {"className": "LiveBig", "where": {}}})))
    replies = []
    while len(replies) < 2:
        op, payload = reader.frame()
        if op == 1:
            replies.append(json.loads(payload)["op"])
    assert replies == ["connected", "subscribed"]
    # ~900 KB per event (object and original) while the client reads nothing: past the kernel's buffers
    # (4 MiB at most) plus the 1 MiB queue within a few writes. Every write is answered all the same. (Few
    # writes: the client must start reading within the 5 s a queued close waits for it.)
    _, made = rest(live, "POST", "/classes/LiveBig", {"text": "x"}, master=True)
    for i in range(10):
        status, _ = rest(live, "PUT", f"/classes/LiveBig/{made['objectId']}", {"text": str(i) * 450_000}, master=True)
        assert status == 200
    events, close = 0, None
    while close is None:
        op, payload = reader.frame()
        if op == 1:
            events += 1
        elif op == 8:
            close = int.from_bytes(payload[:2], "big")
    assert close == 1008 and 0 < events < 10
    s.close()


def test_expired_session_gets_209_without_an_event(pinging):
    # Sessions last 3 s on this server and are checked again every second (with the pings).
    live = {**pinging, "url": pinging["ws"].replace("ws://", "http://")}
    status, user = rest(live, "POST", "/users", {"username": "exp_" + uuid.uuid4().hex[:8], "password": "pw-123"})
    assert status == 201, user
    c = Client(live, sessionToken=user["sessionToken"])
    assert c.connected["op"] == "connected"
    c.subscribe(1, "LiveThing")
    assert c.recv() == {"op": "error", "code": 209, "reconnect": False, "requestId": None, "error": "Invalid session token"}
    c.close()


def test_frames_and_caps(live):
    # Over the message cap (64 KiB): wslay closes with 1009.
    ws = ws_connect(live["ws"], open_timeout=10)
    ws.send("x" * (64 * 1024 + 1))
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=20)
    assert closed.value.rcvd.code == 1009
    # A binary frame: 1003. An unmasked client frame (RFC 6455 §5.1): 1002.
    ws = ws_connect(live["ws"], open_timeout=10)
    ws.send(b"\x00\x01")
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=20)
    assert closed.value.rcvd.code == 1003
    s, reply, _ = raw_upgrade(live)
    s.sendall(b"\x81\x05hello")
    while len(reply) < 4:
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    assert reply[0] == 0x88 and int.from_bytes(reply[2:4], "big") == 1002
    s.close()
    # Subscriptions per connection: 100.
    c = Client(live)
    for i in range(100):
        c.subscribe(i, "LiveThing")
    c.send({"op": "subscribe", "requestId": 100, "query": {"className": "LiveThing", "where": {}}})
    assert c.recv() == {"op": "error", "code": 1, "reconnect": False, "requestId": 100,
                        "error": "Too many subscriptions on this connection (at most 100)."}
    c.close()
    # Connections per address: 32, then 429 until one closes. (A closed connection counts until the server
    # has seen its close, so the earlier ones may take a moment to go.)
    def retrying():
        for _ in range(200):
            try:
                return ws_connect(live["ws"], open_timeout=10)
            except Exception:
                time.sleep(0.05)
        raise AssertionError("no connection slot came free")
    open_ = [retrying() for _ in range(32)]
    with pytest.raises(Exception) as refused:
        ws_connect(live["ws"], open_timeout=10)
    assert "429" in str(refused.value)
    open_.pop().close()
    open_.append(retrying())
    for w in open_:
        w.close()


def photo(live, session):
    with open(os.path.join(ROOT, "Samples", "photos", "landscape_o1.jpg"), "rb") as f:
        data = f.read()
    status, body = rest(live, "POST", "/files/photo.jpg", raw=data, session=session, content_type="image/jpeg")
    assert status == 201, body
    status, body = rest(live, "POST", "/classes/WallImage", {"image": {"__type": "File", "name": body["name"]}, "caption": "hi"},
                        session=session)
    assert status == 201, body
    return body["objectId"]


def owner_friend_stranger(users):
    """Facebook ids from the fixture: an app user with an app-user friend, that friend, and a stranger to both."""
    app = {i for i, u in users.items() if u.get("app_user", True)}
    owner = next(i for i in sorted(app) if len([f for f in users[i]["friends"] if f in app]) >= 1)
    friend = sorted(f for f in users[owner]["friends"] if f in app)[0]
    stranger = sorted(app - set(users[owner]["friends"]) - set(users[friend]["friends"]) - {owner, friend})[0]
    return owner, friend, stranger


def test_one_event_rendered_per_viewer_and_keys(live):
    """Clients share an event's per-viewer work (`LiveFanout`): keyed by session and `keys`, never across them.
    Subscriptions of different viewers and `keys` on one connection and across connections each get exactly
    their own view of the same write."""
    users = fixture_users()
    owner, friend, stranger = owner_friend_stranger(users)
    owner_id, owner_s = fb_login(live, owner)
    _, friend_s = fb_login(live, friend)
    _, stranger_s = fb_login(live, stranger)
    mixed = Client(live)  # anonymous connection; two subscriptions act as the friend
    mixed.subscribe(1, "WallImage", sessionToken=friend_s)
    mixed.subscribe(2, "WallImage")
    mixed.subscribe(3, "WallImage", sessionToken=friend_s, keys=["caption"])
    mixed.subscribe(9, "LiveMarker")
    own = Client(live, sessionToken=owner_s)
    own.subscribe(1, "WallImage", keys=["caption"])
    own.subscribe(2, "WallImage")
    own.subscribe(9, "LiveMarker")
    other = Client(live, sessionToken=stranger_s)
    other.subscribe(1, "WallImage")
    other.subscribe(9, "LiveMarker")

    image = photo(live, owner_s)
    m = marker(live)
    got = {name: c.until_marker(m) for name, c in (("mixed", mixed), ("own", own), ("other", other))}
    assert {n: [(x["op"], x["requestId"]) for x in msgs] for n, msgs in got.items()} == {
        "mixed": [("create", 1), ("create", 3)], "own": [("create", 1), ("create", 2)], "other": []}
    full, trimmed = got["mixed"][0]["object"], got["mixed"][1]["object"]
    assert full["objectId"] == trimmed["objectId"] == image
    assert full["user"]["objectId"] == owner_id and "?" in full["thumbnail"]["url"] and full["caption"] == "hi"
    assert sorted(trimmed) == ["ACL", "__type", "caption", "className", "createdAt", "objectId", "updatedAt"]
    assert sorted(got["own"][0]["object"]) == sorted(trimmed) and got["own"][0]["object"]["caption"] == "hi"
    assert "thumbnail" in got["own"][1]["object"] and got["own"][1]["object"]["user"]["objectId"] == owner_id
    # The friend's own session ends: its two subscriptions get 209, the anonymous one on the same
    # connection stays (and still sees nothing of a friends-only wall).
    assert rest(live, "POST", "/logout", {}, session=friend_s)[0] == 200
    photo(live, owner_s)
    m = marker(live)
    assert [(x["op"], x.get("requestId"), x.get("code")) for x in mixed.until_marker(m)] == [
        ("error", 1, 209), ("error", 3, 209)]
    for c in (mixed, own, other):
        c.close()


def test_shared_rendering_never_crosses_a_per_viewer_rule(live):
    """An event with no `include` and no field rule on its class is rendered once for every viewer (`LiveFanout`,
    `RenderTrace`: nothing to answer differently); one with an `include`d author is rendered per group of viewers
    who see it alike, so an author whose `_User` ACL hides it from one viewer stays a bare pointer for that viewer
    only, as `include=user` gives."""
    users = fixture_users()
    owner, friend, _ = owner_friend_stranger(users)
    owner_id, owner_s = fb_login(live, owner)
    _, friend_s = fb_login(live, friend)
    viewers = {"owner": Client(live, sessionToken=owner_s), "friend": Client(live, sessionToken=friend_s),
               "anonymous": Client(live), "master": Client(live, masterKey=MASTER_KEY)}
    for name, c in viewers.items():
        c.subscribe(1, "WallImage")
        c.subscribe(2, "LivePlain", **({"keys": ["a"]} if name == "friend" else {}))
        c.subscribe(9, "LiveMarker")

    assert rest(live, "PUT", f"/users/{owner_id}", {"ACL": {owner_id: {"read": True, "write": True}}}, session=owner_s)[0] == 200
    try:
        image = photo(live, owner_s)
        status, plain = rest(live, "POST", "/classes/LivePlain", {"a": 1, "b": "two"}, master=True)
        assert status == 201, plain
        m = marker(live)
        got = {name: c.until_marker(m) for name, c in viewers.items()}
        # What GET with include=user answers each of them, while the ACL stands.
        included = {}
        for name, session, master in (("owner", owner_s, False), ("friend", friend_s, False), ("master", None, True)):
            status, body = rest(live, "GET", f"/classes/WallImage/{image}?include=user", session=session, master=master)
            assert status == 200, body
            included[name] = body["user"]
    finally:
        assert rest(live, "PUT", f"/users/{owner_id}", {"ACL": {"*": {"read": True}, owner_id: {"read": True, "write": True}}},
                    session=owner_s)[0] == 200
    assert {n: [(x["op"], x["requestId"]) for x in msgs] for n, msgs in got.items()} == {
        "owner": [("create", 1), ("create", 2)], "friend": [("create", 1), ("create", 2)],
        "anonymous": [("create", 2)], "master": [("create", 1), ("create", 2)]}
    assert got["friend"][0]["object"]["objectId"] == image
    assert {n: got[n][0]["object"]["user"] for n in included} == included
    assert got["friend"][0]["object"]["user"] == {"__type": "Pointer", "className": "_User", "objectId": owner_id}
    assert got["owner"][0]["object"]["user"]["name"] == users[owner]["name"]
    assert got["master"][0]["object"]["user"]["name"] == users[owner]["name"]
    # The plain class: one rendering for all (byte-identical objects), trimmed per `keys`.
    plain_objects = {n: got[n][-1]["object"] for n in viewers}
    assert plain_objects["owner"] == plain_objects["anonymous"] == plain_objects["master"]
    assert plain_objects["owner"]["a"] == 1 and plain_objects["owner"]["b"] == "two"
    assert "b" not in plain_objects["friend"] and plain_objects["friend"]["a"] == 1
    for c in viewers.values():
        c.close()


def test_viewers_share_a_rendering_only_when_every_rule_answers_alike(live):
    """An event is rendered once per group of viewers who see it alike (`LiveFanout.rendered`, `RenderTrace`): a
    viewer reuses a rendering only when it answers every question that rendering asked (field view, whether
    `include` shows the author) the same way. Two friends of the poster who differ only in the author's `_User`
    ACL must get different authors: the one the ACL names gets the public view, the other a bare pointer, each
    exactly what `GET ?include=user` gives them; several friends of each kind, so each group is reused."""
    users = fixture_users()
    app = {i for i, u in users.items() if u.get("app_user", True)}
    owner = max(sorted(app), key=lambda i: len([f for f in users[i]["friends"] if f in app]))
    friends = sorted(f for f in users[owner]["friends"] if f in app)[:4]
    assert len(friends) >= 3, "the fixture needs a user with three app-user friends"
    owner_id, owner_s = fb_login(live, owner)
    sessions = {f: fb_login(live, f) for f in friends}
    granted, others = friends[:(len(friends) + 1) // 2], friends[(len(friends) + 1) // 2:]
    # Subscribe alternately, so deliveries of the two kinds interleave on the delivery queues.
    clients = {}
    for f in [x for pair in zip(granted, others + [None]) for x in pair if x]:
        clients[f] = Client(live, sessionToken=sessions[f][1])
        clients[f].subscribe(1, "WallImage")
        clients[f].subscribe(9, "LiveMarker")
    acl = {owner_id: {"read": True, "write": True}, **{sessions[f][0]: {"read": True} for f in granted}}
    assert rest(live, "PUT", f"/users/{owner_id}", {"ACL": acl}, session=owner_s)[0] == 200
    try:
        image = photo(live, owner_s)
        m = marker(live)
        got = {f: c.until_marker(m) for f, c in clients.items()}
        expected = {}
        for f in friends:
            status, body = rest(live, "GET", f"/classes/WallImage/{image}?include=user", session=sessions[f][1])
            assert status == 200, body
            expected[f] = body["user"]
    finally:
        assert rest(live, "PUT", f"/users/{owner_id}", {"ACL": {"*": {"read": True}, owner_id: {"read": True, "write": True}}},
                    session=owner_s)[0] == 200
    assert {f: [(x["op"], x["requestId"]) for x in msgs] for f, msgs in got.items()} == {f: [("create", 1)] for f in friends}
    assert {f: got[f][0]["object"]["user"] for f in friends} == expected
    for f in granted:
        assert expected[f] == {"__type": "Object", "className": "_User", "objectId": owner_id, "name": users[owner]["name"],
                               "fbId": owner}
    for f in others:
        assert expected[f] == {"__type": "Pointer", "className": "_User", "objectId": owner_id}
    for c in clients.values():
        c.close()


def test_authorization_matrix(live):
    authorization_matrix(live, live)


def authorization_matrix(live, watch):
    """Owner, friend, stranger, anonymous and master, subscribed on `watch`, × every write made on `live`
    (create/update/delete of images and comments, ACL changes, logout, unfriending): who gets which event.
    One instance (`watch` is `live`) or two on one PostgreSQL (test_cluster_live.py). Leaves the owner and the
    friend unfriended at the provider."""
    users = fixture_users()
    owner, friend, stranger = owner_friend_stranger(users)
    owner_id, owner_s = fb_login(live, owner)
    friend_id, friend_s = fb_login(live, friend)
    _, stranger_s = fb_login(live, stranger)

    viewers = {"owner": Client(watch, sessionToken=owner_s), "friend": Client(watch),
               "stranger": Client(watch, sessionToken=stranger_s), "anonymous": Client(watch),
               "master": Client(watch, masterKey=MASTER_KEY)}
    for name, c in viewers.items():
        assert c.connected["op"] == "connected", (name, c.connected)
        extra = {"sessionToken": friend_s} if name == "friend" else {}
        c.subscribe(1, "WallImage", **extra)
        c.subscribe(2, "WallImageComment", **extra)
        c.subscribe(3, "LiveMarker")

    def round_(action):
        action()
        m = marker(live)
        return {name: c.until_marker(m) for name, c in viewers.items()}

    def ops(got):
        return {name: [(m["op"], m["requestId"]) for m in msgs] for name, msgs in got.items()}

    sees = ["owner", "friend", "master"]
    nobody_else = {"stranger": [], "anonymous": []}

    # create image
    holder = {}
    got = round_(lambda: holder.update(image=photo(live, owner_s)))
    image = holder["image"]
    assert ops(got) == {**{n: [("create", 1)] for n in sees}, **nobody_else}
    event = got["friend"][0]["object"]
    # What a feed item carries for that viewer: the author as include encodes it, signed URLs, size.
    assert event["user"] == {"__type": "Object", "className": "_User", "objectId": owner_id, "name": users[owner]["name"],
                             "fbId": owner}
    assert "?" in event["thumbnail"]["url"] and "?" in event["display"]["url"]
    assert event["width"] > 0 and event["height"] > 0 and event["objectId"] == image
    # The owner sees itself in full (as include=user shows it to itself), less its protected fields.
    assert got["owner"][0]["object"]["user"]["objectId"] == owner_id and "authData" not in got["owner"][0]["object"]["user"]

    # update image
    got = round_(lambda: rest(live, "PUT", f"/classes/WallImage/{image}", {"caption": "edited"}, session=owner_s))
    assert ops(got) == {**{n: [("update", 1)] for n in sees}, **nobody_else}
    assert got["friend"][0]["object"]["caption"] == "edited" and got["friend"][0]["original"]["caption"] == "hi"

    # comments: by the friend or the owner, deleted by their author or by the image's owner
    for (author_id, author_s), deleter_s, text in [((friend_id, friend_s), owner_s, "nice"),
                                                   ((owner_id, owner_s), owner_s, "mine"),
                                                   ((friend_id, friend_s), friend_s, "oops")]:
        made = {}
        got = round_(lambda: made.update(rest(live, "POST", "/classes/WallImageComment",
                                              {"comment": text, "imageObjectId": image}, session=author_s)[1]))
        assert ops(got) == {**{n: [("create", 2)] for n in sees}, **nobody_else}
        seen = [got[n][0]["object"] for n in sees]
        assert [(o["objectId"], o["comment"], o["user"]["objectId"]) for o in seen] == [(made["objectId"], text, author_id)] * 3
        got = round_(lambda: rest(live, "DELETE", f"/classes/WallImageComment/{made['objectId']}", session=deleter_s))
        assert ops(got) == {**{n: [("delete", 2)] for n in sees}, **nobody_else}
        assert [got[n][0]["object"]["objectId"] for n in sees] == [made["objectId"]] * 3

    # ACL change: owner-only → the friend gets `leave` with nothing it can't read; back → `enter`.
    private = {owner_id: {"read": True, "write": True}}
    got = round_(lambda: rest(live, "PUT", f"/classes/WallImage/{image}", {"ACL": private}, session=owner_s))
    assert ops(got) == {"owner": [("update", 1)], "friend": [("leave", 1)], "master": [("update", 1)], **nobody_else}
    assert got["friend"][0]["object"] == {"__type": "Object", "className": "WallImage", "objectId": image}
    public = {"*": {"read": True}, owner_id: {"read": True, "write": True}}
    got = round_(lambda: rest(live, "PUT", f"/classes/WallImage/{image}", {"ACL": public}, session=owner_s))
    assert ops(got) == {"owner": [("update", 1)], "friend": [("enter", 1)], "master": [("update", 1)], **nobody_else}
    assert got["friend"][0]["object"]["caption"] == "edited"
    assert got["friend"][0]["original"] == {"__type": "Object", "className": "WallImage", "objectId": image}

    # a comment, then the image's delete cascades to it
    rest(live, "POST", "/classes/WallImageComment", {"comment": "bye", "imageObjectId": image}, session=owner_s)
    got = round_(lambda: rest(live, "DELETE", f"/classes/WallImage/{image}", session=owner_s))
    assert ops(got) == {**{n: [("create", 2), ("delete", 1), ("delete", 2)] for n in sees}, **nobody_else}

    # logout: the friend's subscriptions end with 209 at once; no event reaches it after.
    got = round_(lambda: rest(live, "POST", "/logout", {}, session=friend_s))
    assert got["friend"] == [{"op": "error", "code": 209, "reconnect": False, "requestId": r, "error": "Invalid session token"}
                             for r in (1, 2)]
    assert ops(got) == {**{n: [] for n in viewers if n != "friend"}, "friend": [("error", 1), ("error", 2)]}
    got = round_(lambda: photo(live, owner_s))
    assert ops(got)["friend"] == [] and ops(got)["owner"] == [("create", 1)]

    # unfriending: after the provider ends the friendship (and the 1 s friend-sync TTL), nothing more.
    _, friend_s2 = fb_login(live, friend)
    viewers["friend"].subscribe(4, "WallImage", sessionToken=friend_s2)
    got = round_(lambda: photo(live, owner_s))
    assert ops(got)["friend"] == [("create", 4)]
    req = urllib.request.Request(f"{live['fb']}/__control/friendships/{owner}/{friend}", method="DELETE")
    urllib.request.urlopen(req).read()
    time.sleep(1.2)
    got = round_(lambda: photo(live, owner_s))
    assert ops(got) == {"owner": [("create", 1)], "friend": [], "master": [("create", 1)], **nobody_else}
    for c in viewers.values():
        c.close()


def test_a_new_session_is_a_create_for_its_user_only(live):
    """A login's new `_Session` raises `create` (parse-server's RestWrite does for a live class), seen only
    by its user, as `GET /sessions` shows it."""
    users = fixture_users()
    ids = sorted(i for i, u in users.items() if u.get("app_user", True))
    user_id, first = fb_login(live, ids[-2])
    _, stranger_session = fb_login(live, ids[-3])
    mine, stranger = Client(live, sessionToken=first), Client(live, sessionToken=stranger_session)
    for c in (mine, stranger):
        c.subscribe(1, "_Session")
        c.subscribe(2, "LiveMarker")
    _, second = fb_login(live, ids[-2])
    status, me = rest(live, "GET", "/sessions/me", session=second)
    assert status == 200, me
    m = marker(live)
    got = mine.until_marker(m)
    assert [(e["op"], e["requestId"], e["object"]["className"], e["object"]["objectId"], e["object"]["user"]["objectId"])
            for e in got] == [("create", 1, "_Session", me["objectId"], user_id)]
    # By GET's rule a session's token shows only in that same session: this viewer subscribed with the first.
    assert "sessionToken" not in got[0]["object"]
    assert stranger.until_marker(m) == []
    mine.close()
    stranger.close()


def test_logout_sends_209_before_anything_else(live):
    users = fixture_users()
    someone = sorted(i for i, u in users.items() if u.get("app_user", True))[-1]
    _, session = fb_login(live, someone)
    c = Client(live, sessionToken=session)
    c.subscribe(1, "LiveThing")
    assert rest(live, "POST", "/logout", {}, session=session)[0] == 200
    assert c.recv() == {"op": "error", "code": 209, "reconnect": False, "requestId": None, "error": "Invalid session token"}
    rest(live, "POST", "/classes/LiveThing", {"score": 1}, master=True)
    # The client is no longer connected: its next request is answered with code 2, no event came first.
    c.send({"op": "unsubscribe", "requestId": 1})
    assert c.recv()["code"] == 2
    c.close()


def test_photowall_watch_lines_json_reconnect_and_logout():
    """`photowall watch` (wslay client framing over a plain socket): a line per new photo and comment, NDJSON
    with --json, a reconnect after the server restarts, exit 2 once the session is gone."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    data = tempfile.mkdtemp(prefix="photowall-watch-")
    home = tempfile.mkdtemp(prefix="photowall-watch-home-")
    env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_CACHE_HOME": home + "/cache"}
    serve_args = ["serve", "--port", str(port), "--data-dir", data, "--app-id", APP_ID, "--master-key", MASTER_KEY]
    srv, _, _ = start(serve_args, r"listening on http://127\.0\.0\.1:(\d+)/parse")
    live = {"url": f"http://127.0.0.1:{port}/parse"}
    watchers = []
    try:
        name = "watch_" + uuid.uuid4().hex[:8]
        status, user = rest(live, "POST", "/users", {"username": name, "password": "pw-123"})
        assert status == 201, user
        subprocess.run([BINARY, "login", name, "--password", "pw-123", "--server", live["url"], "--app-id", APP_ID],
                       env=env, check=True, capture_output=True, timeout=30)

        def watcher(*extra):
            p = subprocess.Popen([BINARY, "watch", *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            watchers.append(p)
            assert "following" in p.stderr.readline()
            return p
        as_json, as_text = watcher("--json"), watcher()
        image = photo(live, user["sessionToken"])
        line = json.loads(as_json.stdout.readline())
        assert (line["type"], line["op"], line["object"]["objectId"]) == ("photo", "create", image)
        assert line["object"]["user"]["objectId"] == user["objectId"] and line["object"]["width"] > 0
        assert as_text.stdout.readline() == f'new photo · you · "hi" · id {image}\n'

        # The server goes away and comes back on the same port: both reconnect by themselves.
        srv.stdin.close()
        srv.wait(timeout=20)
        assert "reconnecting" in as_json.stderr.readline()
        srv, _, _ = start(serve_args, r"listening on http://127\.0\.0\.1:(\d+)/parse")
        for p in (as_json, as_text):
            while "following" not in p.stderr.readline():
                pass
        status, comment = rest(live, "POST", "/classes/WallImageComment", {"comment": "still here", "imageObjectId": image},
                               session=user["sessionToken"])
        assert status == 201, comment
        line = json.loads(as_json.stdout.readline())
        assert (line["type"], line["object"]["objectId"], line["object"]["comment"]) == ("comment", comment["objectId"], "still here")
        assert as_text.stdout.readline() == f"comment · you on {image}: still here\n"

        # The session watch uses (the one `photowall login` made) ends: watch says so and exits 2.
        with open(os.path.join(home, "config", "photowall", "session.json")) as f:
            cli_session = json.load(f)["sessionToken"]
        assert rest(live, "POST", "/logout", {}, session=cli_session)[0] == 200
        for p in (as_json, as_text):
            assert p.wait(timeout=30) == 2
            assert "not logged in" in p.stderr.read()
    finally:
        for p in watchers:
            if p.poll() is None:
                p.kill()
        srv.stdin.close()
        srv.wait(timeout=20)
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
