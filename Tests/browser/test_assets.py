"""The wall's files and endpoints over plain HTTP: types, caching, traversal, config, the code exchange."""
import http.client
import json
import os
import urllib.request

from conftest import FB_APP_ID, ROOT

WEB = os.path.join(ROOT, "Sources", "PhotoWallWeb", "Web")


def get(stack, path, method="GET", headers=None, body=None):
    """Raw request (no client-side path normalisation), → (status, headers, body bytes)."""
    port = int(stack["base"].rsplit(":", 1)[1])
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def test_files_are_served_with_their_type_and_validators(stack):
    expected = {"/": "text/html; charset=utf-8", "/index.html": "text/html; charset=utf-8",
                "/app.js": "text/javascript; charset=utf-8", "/tus.js": "text/javascript; charset=utf-8",
                "/app.css": "text/css; charset=utf-8", "/favicon.svg": "image/svg+xml"}
    for path, ctype in expected.items():
        status, h, body = get(stack, path)
        assert status == 200 and h["content-type"] == ctype, path
        name = "index.html" if path == "/" else path[1:]
        with open(os.path.join(WEB, name), "rb") as f:
            assert body == f.read(), f"{path} is the file in the repository"
        assert h["cache-control"] == "no-cache" and h["x-content-type-options"] == "nosniff"
        assert h["etag"].startswith('"') and len(h["etag"]) == 34
        status, h2, body = get(stack, path, headers={"If-None-Match": h["etag"]})
        assert status == 304 and body == b"" and h2["etag"] == h["etag"]
    _, h, _ = get(stack, "/")
    assert "script-src 'self'" in h["content-security-policy"] and h["x-frame-options"] == "DENY"
    status, h, body = get(stack, "/app.js", method="HEAD")
    assert status == 200 and body == b"" and int(h["content-length"]) == os.path.getsize(os.path.join(WEB, "app.js"))


def test_unknown_paths_and_traversal_are_404(stack):
    for path in ("/nope.js", "/../Package.swift", "/..%2fPackage.swift", "/%2e%2e/%2e%2e/etc/passwd", "/Web/index.html",
                 "/./index.html/", "/.hidden", "/app.js%00.html"):
        status, h, body = get(stack, path)
        assert status == 404, path
        assert h["content-type"].startswith("text/plain") and b"root:" not in body


def test_config_comes_from_the_serve_options(stack):
    with urllib.request.urlopen(stack["base"] + "/config.json") as r:
        config = json.load(r)
        assert r.headers["Content-Type"] == "application/json; charset=utf-8"
    assert config == {"appId": "photowall", "serverPath": "/parse", "maxUploadBytes": 20 * 1024 * 1024,
                      "facebook": {"appId": FB_APP_ID, "dialogURL": stack["facebook"] + "/v19.0/dialog/oauth",
                                   "graphURL": stack["facebook"] + "/v19.0", "scope": "public_profile,user_friends"}}


def test_code_exchange_refuses_bad_codes_with_parse_errors(stack):
    status, _, body = get(stack, "/auth/facebook/exchange", method="POST", body=b"{}", headers={"Content-Type": "application/json"})
    assert status == 400 and json.loads(body)["code"] == 107
    status, _, body = get(stack, "/auth/facebook/exchange", method="POST",
                          body=json.dumps({"code": "forged", "redirectUri": stack["base"] + "/"}).encode(),
                          headers={"Content-Type": "application/json"})
    answer = json.loads(body)
    assert status == 404 and answer["code"] == 101 and answer["error"].startswith("Facebook refused the login code")
