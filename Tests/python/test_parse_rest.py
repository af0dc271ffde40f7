"""The seed app's flow through the real Python Parse client `qs-parse-rest` (PyPI, not vendored).

The client reads its API root at import time, so it is imported inside the test after the
server is up. The one-line fix its file upload needs on Python 3 (a bytes URL handed to
urllib) is applied here, in the harness, as the notes describe.
"""
import hashlib
import importlib
import os
import sys
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.environ.get("PHOTOWALL_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "imagecorpus"))


def load_client(url):
    os.environ["PARSE_API_ROOT"] = url
    for name in list(sys.modules):
        if name.startswith("parse_rest"):
            del sys.modules[name]
    connection = importlib.import_module("parse_rest.connection")
    _request = connection.Request
    connection.Request = lambda u, *a, **k: _request(u.decode() if isinstance(u, bytes) else u, *a, **k)
    return connection


def photo_bytes():
    photos = os.path.join(CORPUS, "photos")
    if os.path.isdir(photos):
        name = sorted(f for f in os.listdir(photos) if f.endswith(".jpg"))[0]
        with open(os.path.join(photos, name), "rb") as f:
            return f.read()
    # Without the shared corpus: one of the project's own sample photos (Samples/photos, made by
    # `photowall samples`), so the WallImage still gets its thumbnails.
    print("NOTE: shared corpus not present; uploading Samples/photos/landscape_o1.jpg instead")
    with open(os.path.join(ROOT, "Samples", "photos", "landscape_o1.jpg"), "rb") as f:
        return f.read()


def test_seed_flow_with_qs_parse_rest(server):
    from conftest import APP_ID, MASTER_KEY, REST_KEY
    connection = load_client(server["url"])
    connection.register(APP_ID, REST_KEY, master_key=MASTER_KEY)
    from parse_rest.datatypes import Object, File
    from parse_rest.user import User
    from parse_rest.connection import SessionToken, ParseBatcher

    class WallImage(Object):
        pass

    class WallImageComment(Object):
        pass

    username = "py_" + uuid.uuid4().hex[:8]
    User.signup(username, "pw-123")
    user = User.login(username, "pw-123")
    assert user.sessionToken.startswith("r:") and len(user.sessionToken) == 34

    with SessionToken(user.sessionToken):
        me = User.current_user()
        assert me.username == username

        data = photo_bytes()
        f = File("photo.jpg", data, "image/jpeg")
        f.save()
        assert f.name.endswith("_photo.jpg") and len(f.name) == 32 + 1 + len("photo.jpg")

        fb_id = me.objectId  # no Facebook account linked: the server records the objectId as userFBId
        img = WallImage(image=f, user=me, userFBId=fb_id, likes=0)
        img.save()
        assert len(img.objectId) == 10
        img.caption = "from python"
        img.save()
        img.increment("likes")

        comment = WallImageComment(comment="hello", user=me, userFBId=fb_id, imageObjectId=img.objectId)
        comment.save()

        wall = list(WallImage.Query.filter(userFBId__in=[fb_id, "nobody"]).order_by("createdAt", descending=True)
                    .select_related("user").limit(20))
        assert [w.objectId for w in wall] == [img.objectId]
        assert wall[0].caption == "from python"
        assert wall[0].likes == 1
        assert wall[0].user.username == username
        assert WallImage.Query.filter(userFBId=fb_id).count() == 1
        got = WallImage.Query.get(objectId=img.objectId)
        assert got.userFBId == fb_id

        # The file comes back byte-identical from its URL.
        import urllib.request
        with urllib.request.urlopen(wall[0].image.url) as r:
            assert hashlib.sha256(r.read()).hexdigest() == hashlib.sha256(data).hexdigest()

        comments = list(WallImageComment.Query.filter(imageObjectId__in=[img.objectId]).order_by("createdAt"))
        assert [c.comment for c in comments] == ["hello"]

        batch = [WallImageComment(comment=f"c{i}", userFBId=fb_id, imageObjectId=img.objectId) for i in range(3)]
        ParseBatcher().batch_save(batch)
        assert all(len(c.objectId) == 10 for c in batch)
        assert WallImageComment.Query.filter(imageObjectId=img.objectId).count() == 4
        ParseBatcher().batch_delete(batch)
        assert WallImageComment.Query.filter(imageObjectId=img.objectId).count() == 1

        comment.delete()
        img.delete()
        assert WallImage.Query.filter(userFBId=fb_id).count() == 0
        me.logout()


def test_rest_key_is_enforced(server):
    import json
    import urllib.error
    import urllib.request
    from conftest import APP_ID
    req = urllib.request.Request(server["url"] + "/classes/WallImage", headers={
        "X-Parse-Application-Id": APP_ID, "X-Parse-REST-API-Key": "wrong"})
    try:
        urllib.request.urlopen(req)
        raise AssertionError("expected 403")
    except urllib.error.HTTPError as e:
        assert e.code == 403
        assert json.loads(e.read()) == {"error": "unauthorized"}
