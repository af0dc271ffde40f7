"""LiveQuery across instances: two `photowall serve` on one PostgreSQL (LISTEN/NOTIFY, no other server).

Needs PostgreSQL: `PHOTOWALL_TEST_DATABASE` (set by `scripts/pg.sh start`, as `make test-postgres` does); without
it the tests are SKIPPED. Both instances share one data folder (files) and one mock Facebook. "Nothing arrives"
is checked with a marker (see test_livequery.py): a `LiveMarker` created on instance A after the action, whose
`create` reaches B's clients after anything the action sent them (one instance's notifications arrive in order).
The first event of each round must arrive within CROSS_DEADLINE seconds: a generous deadline for a loaded debug
build, not a timing assertion (latency is measured by `make bench`).
"""
import json
import os
import shutil
import tempfile
import time

import pytest

from conftest import APP_ID, MASTER_KEY, REST_KEY
from test_livequery import (FB_APP_ID, FB_SECRET, Client, authorization_matrix, fb_login, fixture_users, marker,
                            owner_friend_stranger, photo, rest, start)

DATABASE = os.environ.get("PHOTOWALL_TEST_DATABASE")
CROSS_DEADLINE = 5.0

pytestmark = pytest.mark.skipif(not DATABASE, reason="SKIPPED: no PostgreSQL configured (PHOTOWALL_TEST_DATABASE; "
                                                     "run `make test-postgres`)")


def serve(data, fb_url, port=0):
    proc, _, port = start(["serve", "--port", str(port), "--data-dir", data, "--database", DATABASE,
                           "--app-id", APP_ID, "--master-key", MASTER_KEY, "--rest-key", REST_KEY,
                           "--facebook-url", fb_url + "/v19.0", "--facebook-app-id", FB_APP_ID,
                           "--facebook-app-secret", FB_SECRET, "--friend-sync-ttl", "1"],
                          r"listening on http://127\.0\.0\.1:(\d+)/parse")
    return proc, {"port": int(port), "url": f"http://127.0.0.1:{port}/parse", "ws": f"ws://127.0.0.1:{port}/parse",
                  "fb": fb_url}


def stop(proc):
    proc.stdin.close()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def cluster():
    fb, fb_dir, fb_url = start(["mock-facebook", "--port", "0", "--app-id", FB_APP_ID, "--app-secret", FB_SECRET,
                                "--no-appsecret-proof"], r"listening on (http://127\.0\.0\.1:\d+)")
    data = tempfile.mkdtemp(prefix="photowall-cluster-")
    a, live_a = serve(data, fb_url)
    b, live_b = serve(data, fb_url)
    state = {"a": live_a, "b": live_b, "procs": {"a": a, "b": b, "fb": fb}, "data": data, "fb": fb_url}
    yield state
    for p in state["procs"].values():
        stop(p)
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(fb_dir, ignore_errors=True)


def people(live):
    return [fb_login(live, i) for i in owner_friend_stranger(fixture_users())]


def first(client, deadline=CROSS_DEADLINE):
    return json.loads(client.ws.recv(timeout=deadline))


def test_events_cross_from_a_to_b_per_viewer(cluster):
    a, b = cluster["a"], cluster["b"]
    (owner_id, owner_s), (_, friend_s), (_, stranger_s) = people(a)
    friend = Client(b)
    friend.subscribe(1, "WallImage", sessionToken=friend_s)
    friend.subscribe(2, "LiveThing")
    friend.subscribe(3, "LiveMarker")
    stranger = Client(b, sessionToken=stranger_s)
    stranger.subscribe(1, "WallImage")
    stranger.subscribe(3, "LiveMarker")

    # A photo posted on A reaches the friend on B, rendered for the friend there (author, signed URLs).
    image = photo(a, owner_s)
    created = first(friend)
    assert (created["op"], created["requestId"], created["object"]["objectId"]) == ("create", 1, image)
    assert created["object"]["caption"] == "hi" and created["object"]["user"]["objectId"] == owner_id
    assert "?" in created["object"]["thumbnail"]["url"]

    # An update carries its original across; a delete the deleted object.
    assert rest(a, "PUT", f"/classes/WallImage/{image}", {"caption": "edited"}, session=owner_s)[0] == 200
    updated = first(friend)
    assert (updated["op"], updated["object"]["caption"], updated["original"]["caption"]) == ("update", "edited", "hi")
    assert rest(a, "DELETE", f"/classes/WallImage/{image}", session=owner_s)[0] == 200
    deleted = first(friend)
    assert (deleted["op"], deleted["requestId"], deleted["object"]["objectId"]) == ("delete", 1, image)

    # An event larger than NOTIFY's 8000-byte payload goes through the database and arrives whole.
    big = "x" * 20000
    status, thing = rest(a, "POST", "/classes/LiveThing", {"blob": big}, master=True)
    assert status == 201, thing
    got = first(friend)
    assert (got["op"], got["requestId"], got["object"]["objectId"], got["object"]["blob"]) == ("create", 2, thing["objectId"], big)
    assert rest(a, "PUT", f"/classes/LiveThing/{thing['objectId']}", {"blob": "small"}, master=True)[0] == 200
    got = first(friend)
    assert (got["op"], got["object"]["blob"], got["original"]["blob"]) == ("update", "small", big)

    # The stranger on B got none of it: only the marker.
    m = marker(a)
    assert stranger.until_marker(m) == []
    assert friend.until_marker(m) == []

    # A logout on A ends the friend's subscription on B with 209, and nothing reaches it afterwards.
    assert rest(a, "POST", "/logout", {}, session=friend_s)[0] == 200
    assert first(friend) == {"op": "error", "code": 209, "reconnect": False, "requestId": 1, "error": "Invalid session token"}
    photo(a, owner_s)
    m = marker(a)
    assert friend.until_marker(m) == []
    assert stranger.until_marker(m) == []
    friend.close()
    stranger.close()


def test_client_reconnects_after_b_restarts(cluster):
    a, b = cluster["a"], cluster["b"]
    (owner_id, owner_s), (_, friend_s), _ = people(a)
    watcher = Client(b, sessionToken=friend_s)
    watcher.subscribe(1, "WallImage")
    stop(cluster["procs"]["b"])
    with pytest.raises(Exception):
        watcher.recv()  # the restart closes the connection
    proc, b = serve(cluster["data"], cluster["fb"], b["port"])
    cluster["procs"]["b"], cluster["b"] = proc, b
    # The client reconnects (with a short retry while B comes up) and subscribes again.
    for attempt in range(50):
        try:
            watcher = Client(b, sessionToken=friend_s)
            break
        except OSError:
            time.sleep(0.2)
    watcher.subscribe(1, "WallImage")
    image = photo(a, owner_s)
    created = first(watcher)
    assert (created["op"], created["object"]["objectId"], created["object"]["user"]["objectId"]) == ("create", image, owner_id)
    watcher.close()


def test_authorization_matrix_across_instances(cluster):
    """The single-instance event matrix with every write on A and every viewer on B: images and comments (by
    their author and by the image's owner), ACL changes (`leave`/`enter`), logout, unfriending, master.
    Last in this file: it ends the owner's and the friend's friendship at the provider."""
    authorization_matrix(cluster["a"], cluster["b"])
