"""The wall's layout and its small interactions, in headless Chromium against the real servers: a grid that
grows with the width (screenshots at 390, 1280 and 1920 px), photos in their own aspect ratio with no layout
shift as they load, avatars, relative times and captions, comments on demand, the viewer's keys, upload rows
(speed, Cancel, Dismiss, fading) and a server that goes away and comes back.

The photos here belong to a user D who is friends with none of test_wall.py's users, so both files can share
one server in any order."""
import json
import os
import re
import shutil
import tempfile
import urllib.parse
import uuid

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from conftest import ARTIFACTS, DESKTOP, ROOT, fixture_users, rest, start_server, stop
from test_wall import A, B, C, LARGE_PHOTO, login, photo_ids, shot, upload, wait

PHONE_390 = (390, 844)
WIDE = (1920, 1080)
SAMPLE = os.path.join(ROOT, "Samples", "photos", "landscape_o1.jpg")


def pick_d():
    """An app user who is none of A, B, C and friends with none of them."""
    users = fixture_users()
    friends = {u["id"]: set(u.get("friends", [])) for u in users}
    for u in users:
        for f in u.get("friends", []):
            friends.setdefault(f, set()).add(u["id"])
    taken = {A["id"], B["id"], C["id"]}
    for u in users:
        if u.get("app_user", True) and u["id"] not in taken and not (friends[u["id"]] & taken):
            return u
    raise AssertionError("the fixture has no fourth user unrelated to A, B and C")


D = pick_d()


def portrait_jpeg():
    """Samples' 1200x800 landscape with EXIF orientation 6: upright it is an 800x1200 portrait."""
    with open(SAMPLE, "rb") as f:
        data = bytearray(f.read())
    tag = bytes([0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00])  # Orientation, SHORT, 1 value: 1
    at = data.find(tag)
    assert at > 0, "the sample's EXIF orientation tag"
    data[at + 8] = 6
    return bytes(data)


def user_object_id(stack, fb_id):
    status, users, _ = rest(stack, "GET", "/users?where=" + urllib.parse.quote(json.dumps({"fbId": fb_id})))
    assert status == 200 and len(users["results"]) == 1
    return users["results"][0]["objectId"]


def post_photo(stack, owner, data, name, caption=None):
    """A WallImage of `owner` (a fixture user who has logged in) with the JPEG bytes `data`; → its objectId."""
    status, file, _ = rest(stack, "POST", f"/files/{name}", raw=data, headers={"Content-Type": "image/jpeg"})
    assert status == 201, file
    fields = {"image": {"__type": "File", "name": file["name"]}, "userFBId": owner["id"],
              "user": {"__type": "Pointer", "className": "_User", "objectId": user_object_id(stack, owner["id"])}}
    if caption:
        fields["caption"] = caption
    status, obj, _ = rest(stack, "POST", "/classes/WallImage", fields)
    assert status == 201, obj
    return obj["objectId"]


def columns(driver):
    """How many columns the wall shows: the distinct left edges of the cards."""
    return driver.execute_script(
        "return new Set([...document.querySelectorAll('#feed article.photo')].map(a => Math.round(a.getBoundingClientRect().left))).size")


def images_loaded(driver):
    """Every card photo in the viewport has loaded (lazy ones further down are not asked for yet)."""
    return driver.execute_script("""
        const imgs = [...document.querySelectorAll('#feed .thumb img')].filter(i => i.getBoundingClientRect().top < innerHeight);
        return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0);""")


CLS_OBSERVER = """
window.__shifts = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.hadRecentInput) continue;
    window.__shifts.push({value: e.value, sources: (e.sources || []).map(s => (s.node && (s.node.id || s.node.className || s.node.nodeName)) || '?')});
  }
}).observe({type: 'layout-shift', buffered: true});
"""


def page_errors(driver):
    """JavaScript errors and CSP refusals the page logged since the last call (Chromium's own /favicon.ico
    probe aside: the page names favicon.svg)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE" and "/favicon.ico " not in e["message"]]


def test_wall_uses_the_width_and_keeps_photos_whole(stack, browser):
    d = browser(WIDE)
    session = login(d, stack, D, "10-layout")
    portrait = post_photo(stack, D, portrait_jpeg(), "portrait.jpg")
    with open(SAMPLE, "rb") as f:
        landscape = f.read()
    ids = [post_photo(stack, D, landscape, f"landscape{i}.jpg") for i in range(7)]
    captioned = post_photo(stack, D, landscape, "captioned.jpg", caption="Sunday walk")
    # Four comments on the captioned photo: the card shows the two latest and "View all 4 comments".
    said = [f"remark {i} {uuid.uuid4().hex[:4]}" for i in range(4)]
    for t in said:
        status, _, _ = rest(stack, "POST", "/classes/WallImageComment", {"comment": t, "imageObjectId": captioned},
                            session=session["sessionToken"], master=False)
        assert status == 201
    # A fresh load, watched for layout shifts from the start.
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CLS_OBSERVER})
    d.get(stack["base"] + "/")
    wait(d).until(lambda _: len(photo_ids(d)) == 9)
    wait(d).until(lambda _: images_loaded(d))
    d.execute_script("return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    shifts = d.execute_script("return window.__shifts")
    assert sum(s["value"] for s in shifts) == 0, f"cumulative layout shift: {shifts}"
    assert photo_ids(d) == [captioned] + list(reversed(ids)) + [portrait]
    wide = columns(d)
    shot(d, "10-layout-1920")
    assert wide >= 6, f"{wide} columns at 1920 px"

    # The portrait photo is whole: its box has the photo's own shape (800x1200 upright), nothing cropped.
    img = d.find_element(By.CSS_SELECTOR, f"#photo-{portrait} .thumb img")
    d.execute_script("arguments[0].scrollIntoView({block:'center'})", img)
    wait(d).until(lambda _: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) > 0)
    box = d.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height, arguments[0].naturalWidth, arguments[0].naturalHeight]", img)
    assert abs(box[0] / box[1] - 800 / 1200) / (800 / 1200) < 0.01, box
    assert abs(box[2] / box[3] - 800 / 1200) < 0.01, f"the thumbnail itself is upright: {box}"
    assert d.execute_script("return getComputedStyle(arguments[0]).objectFit", img) in ("contain", "fill")
    d.execute_script("window.scrollTo(0, 0)")

    d.set_window_size(*DESKTOP)
    wait(d).until(lambda _: columns(d) < wide)
    desktop = columns(d)
    shot(d, "10-layout-1280")
    assert 3 <= desktop < wide, f"{desktop} columns at 1280 px, {wide} at 1920 px"

    d.set_window_size(*PHONE_390)
    wait(d).until(lambda _: columns(d) == 1)
    assert d.execute_script("return document.documentElement.scrollWidth") <= PHONE_390[0], "nothing wider than the phone"
    header = d.find_element(By.CSS_SELECTOR, "header.top").rect
    assert header["height"] < 80, f"the top bar stays one line on a phone: {header}"
    shot(d, "10-layout-390")
    # The viewer fits the phone, its buttons on screen.
    thumb = d.find_element(By.CSS_SELECTOR, f"#photo-{portrait} .thumb")
    d.execute_script("arguments[0].scrollIntoView({block:'center'})", thumb)
    thumb.click()
    wait(d).until(EC.visibility_of_element_located((By.ID, "viewer")))
    big = d.find_element(By.ID, "viewer-img")
    wait(d).until(lambda _: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", big) > 0)
    for b in ("viewer-prev", "viewer-close"):
        r = d.find_element(By.ID, b).rect
        assert 0 <= r["x"] and r["x"] + r["width"] <= PHONE_390[0], (b, r)
    shot(d, "10-layout-390-viewer")
    ActionChains(d).send_keys(Keys.ESCAPE).perform()
    wait(d).until(EC.invisibility_of_element_located((By.ID, "viewer")))

    # People and time: initials on a colour, the same for the same person; a relative time with the date on hover.
    card = d.find_element(By.ID, f"photo-{captioned}")
    av = card.find_element(By.CSS_SELECTOR, ".photo-head .avatar")
    initials = "".join(w[0] for w in (D["name"].split()[0], D["name"].split()[-1])).upper()
    assert av.text == initials
    colour = av.value_of_css_property("background-color")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")
    assert d.find_element(By.CSS_SELECTOR, f"#photo-{portrait} .photo-head .avatar").value_of_css_property("background-color") == colour
    when = card.find_element(By.CSS_SELECTOR, ".photo-head time")
    assert re.fullmatch(r"just now|\d+ min ago", when.text), when.text
    status, obj, _ = rest(stack, "GET", f"/classes/WallImage/{captioned}")
    assert when.get_attribute("datetime") == obj["createdAt"]
    assert re.search(r"\b20\d\d\b", when.get_attribute("title")), when.get_attribute("title")
    # The relative times are kept current (every 30 s, and when the page is shown again).
    d.execute_script("arguments[0].dateTime = new Date(Date.now() - 3 * 60000 - 5000).toISOString();"
                     "document.dispatchEvent(new Event('visibilitychange'))", when)
    assert when.text == "3 min ago"
    # The caption, the two latest comments and "View all 4 comments".
    assert card.find_element(By.CSS_SELECTOR, ".caption-text").text == "Sunday walk"
    assert card.find_element(By.CSS_SELECTOR, ".caption-who").text == D["name"]
    assert [e.text for e in card.find_elements(By.CSS_SELECTOR, ".comment-text")] == said[2:]
    more = card.find_element(By.CLASS_NAME, "more-comments")
    assert more.text == "View all 4 comments"
    d.execute_script("arguments[0].scrollIntoView({block:'center'})", more)
    more.click()
    wait(d).until(lambda _: d.execute_script(
        "return [...arguments[0].querySelectorAll('.comment-text')].map(e => e.textContent)", card) == said)
    assert not more.is_displayed()

    # The comment field opens on demand; "Comment posted." goes away and leaves no gap.
    form = card.find_element(By.CLASS_NAME, "comment-form")
    assert not form.is_displayed()
    opener = card.find_element(By.CLASS_NAME, "comment-open")
    opener.click()
    field = form.find_element(By.TAG_NAME, "input")
    assert form.is_displayed() and d.switch_to.active_element == field
    field.send_keys("Lovely light")
    field.send_keys(Keys.ENTER)
    status_line = card.find_element(By.CLASS_NAME, "comment-status")
    wait(d).until(lambda _: status_line.text == "Comment posted.")
    shot(d, "10-layout-390-commented")
    height_with_status = card.rect["height"]
    wait(d, 15).until(lambda _: status_line.get_attribute("textContent") == "")
    assert not status_line.is_displayed() and status_line.rect["height"] == 0
    assert card.rect["height"] < height_with_status, "the card got its height back"
    assert card.find_elements(By.CSS_SELECTOR, ".comment-text")[-1].text == "Lovely light"
    assert page_errors(d) == []


def test_viewer_steps_with_the_arrow_keys(stack, browser):
    d = browser(DESKTOP)
    login(d, stack, D, "11-viewer")
    ids = photo_ids(d)
    assert len(ids) >= 3, "needs the photos of the layout test"
    d.find_element(By.CSS_SELECTOR, f"#photo-{ids[0]} .thumb").click()
    viewer = wait(d).until(EC.visibility_of_element_located((By.ID, "viewer")))
    assert viewer.get_attribute("data-object-id") == ids[0]
    assert d.find_element(By.ID, "viewer-position").text.startswith(f"1 of {len(ids)}")
    assert not d.find_element(By.ID, "viewer-prev").is_enabled()
    keys = ActionChains(d)
    keys.send_keys(Keys.ARROW_RIGHT).perform()
    wait(d).until(lambda _: viewer.get_attribute("data-object-id") == ids[1])
    keys.send_keys(Keys.ARROW_RIGHT).perform()
    wait(d).until(lambda _: viewer.get_attribute("data-object-id") == ids[2])
    keys.send_keys(Keys.ARROW_LEFT).perform()
    wait(d).until(lambda _: viewer.get_attribute("data-object-id") == ids[1])
    d.find_element(By.ID, "viewer-next").click()
    wait(d).until(lambda _: viewer.get_attribute("data-object-id") == ids[2])
    big = d.find_element(By.ID, "viewer-img")
    wait(d).until(lambda _: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", big) > 0)
    shot(d, "11-viewer-3-third-photo")
    ActionChains(d).send_keys(Keys.ESCAPE).perform()
    wait(d).until(EC.invisibility_of_element_located((By.ID, "viewer")))
    # The focus is on the card of the photo shown last.
    active = d.switch_to.active_element
    assert active.get_attribute("class") == "thumb"
    assert d.execute_script("return arguments[0].closest('article').dataset.objectId", active) == ids[2]
    assert page_errors(d) == []


def tus_status(stack, url):
    status, _, _ = rest(stack, "HEAD", stack["base"] + url, headers={"Tus-Resumable": "1.0.0"})
    return status


def kept_files(driver):
    return driver.execute_async_script("""const done = arguments[0];
        const r = indexedDB.open('photowall', 1);
        r.onupgradeneeded = () => r.result.createObjectStore('pending-uploads', {keyPath: 'key'});
        r.onsuccess = () => { const q = r.result.transaction('pending-uploads').objectStore('pending-uploads').count();
                              q.onsuccess = () => done(q.result); };
        r.onerror = () => done(-1);""")


def test_upload_rows_show_speed_cancel_and_go_away(stack, browser):
    d = browser(DESKTOP)
    login(d, stack, D, "12-rows")
    d.execute_script("localStorage.setItem('photowall.chunkBytes', String(128 * 1024))")
    d.refresh()
    wait(d).until(EC.visibility_of_element_located((By.ID, "share-open")))
    d.set_network_conditions(offline=False, latency=20, download_throughput=4 * 1024 * 1024, upload_throughput=96 * 1024)
    item = upload(d, LARGE_PHOTO, screenshot="12-rows-2-share-panel")
    wait(d).until(lambda _: item.get_attribute("data-upload-url"))
    url = item.get_attribute("data-upload-url")
    status = item.find_element(By.CLASS_NAME, "upload-status")
    # Speed and time left while it runs.
    wait(d, 60).until(lambda _: re.search(r"of .* · \d+ kB/s · (\d+ s|\d+ min \d\d s) left$", status.text))
    shot(d, "12-rows-3-speed")
    cancel = item.find_element(By.CSS_SELECTOR, "button.cancel")
    assert cancel.get_attribute("aria-label") == f"Cancel the upload of {os.path.basename(LARGE_PHOTO)}"
    cancel.click()
    wait(d).until(lambda _: "cancelled" in item.get_attribute("class").split())
    assert status.text == "Cancelled."
    d.delete_network_conditions()
    # Terminated on the server (tus DELETE), forgotten in the page: no URL, no kept file.
    wait(d).until(lambda _: tus_status(stack, url) == 404)
    assert d.execute_script("return Object.keys(localStorage).filter(k => k.startsWith('photowall.tus:')).length") == 0
    assert kept_files(d) == 0
    assert not d.find_element(By.ID, "resume-hint").is_displayed()
    shot(d, "12-rows-4-cancelled")
    item.find_element(By.CSS_SELECTOR, "button.dismiss").click()
    wait(d).until(lambda _: not d.find_elements(By.CSS_SELECTOR, "#uploads li"))
    # A finished row can be dismissed at once ...
    item = upload(d, SAMPLE, "dismissed row")
    wait(d, 60).until(lambda _: "done" in item.get_attribute("class").split())
    item.find_element(By.CSS_SELECTOR, "button.dismiss").click()
    wait(d).until(lambda _: not d.find_elements(By.CSS_SELECTOR, "#uploads li"))
    # ... and fades out by itself.
    d.execute_script("localStorage.setItem('photowall.doneRowMs', '1500')")
    d.refresh()
    wait(d).until(EC.visibility_of_element_located((By.ID, "share-open")))
    item = upload(d, SAMPLE, "fading row")
    wait(d, 60).until(lambda _: "done" in item.get_attribute("class").split())
    d.find_element(By.TAG_NAME, "h1").click()  # the pointer away from the row
    wait(d, 15).until(lambda _: not d.find_elements(By.CSS_SELECTOR, "#uploads li"))


def test_server_down_every_retry_shown_then_resumes_by_itself(stack, browser):
    """The server stops before an upload starts: the create step's retries count down in the row, then the
    row says the upload resumes by itself, and it does once the server is back on its port."""
    data = tempfile.mkdtemp(prefix="photowall-down-")
    srv, port = start_server(data, stack["fb_port"])
    own = {**stack, "base": f"http://127.0.0.1:{port}", "api": f"http://127.0.0.1:{port}/parse"}
    try:
        d = browser(DESKTOP)
        login(d, own, D, "13-down")
        d.execute_script("localStorage.setItem('photowall.maxRetries', '2'); localStorage.setItem('photowall.retryBaseMs', '3000');"
                         "localStorage.setItem('photowall.resumeMs', '6000')")
        d.refresh()
        wait(d).until(EC.visibility_of_element_located((By.ID, "share-open")))
        wait(d).until(lambda _: d.find_element(By.ID, "wall-status").text.startswith("The wall is empty"))
        stop(srv)
        srv = None
        item = upload(d, SAMPLE, "back again")
        status = item.find_element(By.CLASS_NAME, "upload-status")
        wait(d).until(lambda _: re.fullmatch(r"Can't reach the server, trying again in \d s", status.text))
        assert item.get_attribute("data-retry-phase") == "create"
        first = int(re.search(r"\d", status.text).group())
        wait(d).until(lambda _: (m := re.search(r"in (\d) s$", status.text)) and int(m.group(1)) < first)  # it counts down
        shot(d, "13-down-3-retrying")
        assert "can't reach the server, trying again" in d.find_element(By.ID, "upload-live").get_attribute("textContent")
        wait(d, 30).until(lambda _: item.get_attribute("data-gave-up"))
        assert int(item.get_attribute("data-retries")) == 2
        assert re.fullmatch(r"Can't reach the server\. The upload resumes by itself when it's back: next try in \d s\.", status.text), status.text
        assert item.find_element(By.CSS_SELECTOR, "button.cancel").is_displayed()
        shot(d, "13-down-4-gave-up")
        srv, _ = start_server(data, stack["fb_port"], port)
        wait(d, 60).until(lambda _: {"done", "failed"} & set(item.get_attribute("class").split()))
        assert "done" in item.get_attribute("class").split(), status.text
        image_id = item.get_attribute("data-object-id")
        assert photo_ids(d)[0] == image_id
        assert d.find_element(By.CSS_SELECTOR, f"#photo-{image_id} .caption-text").text == "back again"
        assert kept_files(d) == 0
        shot(d, "13-down-5-resumed")
    finally:
        if srv:
            stop(srv)
        shutil.rmtree(data, ignore_errors=True)
