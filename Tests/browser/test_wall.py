"""The browser wall in headless Chromium against the real servers: Facebook dialog login, tus upload with
progress, friends-only visibility, comments, paging on scroll, and an upload resumed after a reload.

The tests run in file order and share one server (the photo uploaded first is looked for later)."""
import glob
import json
import os
import subprocess
import tempfile
import urllib.parse
import time
import uuid

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.support.ui import WebDriverWait

from conftest import ARTIFACTS, BINARY, DESKTOP, PHONE, ROOT, fixture_users, rest

CORPUS = os.environ.get("PHOTOWALL_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "imagecorpus"))
CORPUS_PHOTOS = sorted(glob.glob(os.path.join(CORPUS, "photos", "*.jpg")), key=os.path.getsize)
if not CORPUS_PHOTOS:
    print(f"NOTE: the image corpus ({CORPUS}/photos) is absent: the browser tests upload Samples/photos images instead.")
SMALL_PHOTO = CORPUS_PHOTOS[0] if CORPUS_PHOTOS else os.path.join(ROOT, "Samples", "photos", "landscape_o6.jpg")
LARGE_PHOTO = CORPUS_PHOTOS[-1] if CORPUS_PHOTOS else os.path.join(ROOT, "Samples", "photos", "landscape_o1.jpg")
CHUNK = 128 * 1024  # the chunk size the resume tests set, small enough for several chunks per photo
_rendered = []


def resume_photos():
    """Two photos of more than 8 chunks (`CHUNK`) for the resume tests: the corpus's two largest, or, without
    the corpus, two 4000x3000 photos rendered by `photowall samples` (Samples/ holds only small ones)."""
    if len(CORPUS_PHOTOS) > 1 and os.path.getsize(CORPUS_PHOTOS[-2]) > 8 * CHUNK:
        return CORPUS_PHOTOS[-1], CORPUS_PHOTOS[-2]
    if not _rendered:
        out = tempfile.mkdtemp(prefix="photowall-browser-photos-")
        subprocess.run([BINARY, "samples", out, "--width", "4000", "--height", "3000"], check=True, capture_output=True)
        _rendered.extend(sorted(glob.glob(os.path.join(out, "landscape_o*.jpg")))[:2])
    return _rendered[0], _rendered[1]

shared = {}


def pick_users():
    """An uploader A, a friend B of A, and a stranger C (friends with neither); all already use the app."""
    users = fixture_users()
    by_id = {u["id"]: u for u in users}
    friends = {u["id"]: set(u.get("friends", [])) for u in users}
    for u in users:  # a friendship listed on one side counts for both
        for f in u.get("friends", []):
            friends.setdefault(f, set()).add(u["id"])
    for a in users:
        if not a.get("app_user", True):
            continue
        for b in (by_id[f] for f in sorted(friends[a["id"]]) if by_id[f].get("app_user", True)):
            strangers = [u for u in users if u["id"] not in (a["id"], b["id"]) and u.get("app_user", True)
                         and u["id"] not in friends[a["id"]] and u["id"] not in friends[b["id"]]]
            if strangers:
                return a, b, strangers[0]
    raise AssertionError("the fixture has no user with a friend and a stranger")


A, B, C = pick_users()


def shot(driver, name):
    path = os.path.join(ARTIFACTS, f"{name}.png")
    driver.save_screenshot(path)
    return path


class _Wait(WebDriverWait):
    """`WebDriverWait` whose condition, when the page navigates under it (the login's redirects), counts
    as not yet true instead of failing: ChromeDriver answers a lookup cut short by a navigation with
    "aborted by navigation", which says nothing about the page that comes next. Any other error still
    fails at once."""

    def until(self, method, message=""):
        def check(driver):
            try:
                return method(driver)
            except WebDriverException as e:
                if "aborted by navigation" in (e.msg or ""):
                    return False
                raise
        return super().until(check, message)


def wait(driver, seconds=30):
    return _Wait(driver, seconds, poll_frequency=0.1)


def login(driver, stack, user, name):
    """Logs in through the page's button and the mock Facebook dialog, as a person would."""
    driver.get(stack["base"] + "/")
    button = wait(driver).until(EC.element_to_be_clickable((By.ID, "login-facebook")))
    shot(driver, f"{name}-1-login")
    button.click()
    wait(driver).until(EC.url_contains("/dialog/oauth"))
    radio = wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, f"input[name=user_id][value='{user['id']}']")))
    driver.execute_script("arguments[0].scrollIntoView({block:'center'})", radio)
    radio.click()
    shot(driver, f"{name}-2-facebook-dialog")
    driver.find_element(By.CSS_SELECTOR, "button.approve").click()
    wait(driver).until(EC.visibility_of_element_located((By.ID, "account")))
    assert driver.find_element(By.ID, "me-name").get_attribute("textContent") == f"Logged in as {user['name']}", driver.find_element(By.ID, "account").get_attribute("outerHTML")
    session = driver.execute_script("return JSON.parse(localStorage.getItem('photowall.session'))")
    assert session["sessionToken"].startswith("r:") and session["fbId"] == user["id"]
    assert "code=" not in driver.current_url, "the login code must not stay in the address bar"
    # The wall has answered (photos, or the empty-wall message).
    wait(driver).until(lambda d: d.find_element(By.ID, "wall-status").text not in ("", "Loading photos…"))
    return session


def open_share(driver):
    """Opens the "Share photos" panel with its button."""
    driver.find_element(By.ID, "share-open").click()
    wait(driver).until(EC.visibility_of_element_located((By.ID, "upload-form")))


def upload(driver, path, comment="", screenshot=None):
    """Opens the share panel, chooses `path` in the file input, types the caption and presses Upload (a
    screenshot of the panel first when named); returns the upload's list item."""
    before = len(driver.find_elements(By.CSS_SELECTOR, "#uploads li"))
    open_share(driver)
    driver.find_element(By.ID, "files").send_keys(path)
    assert driver.find_element(By.ID, "chosen").text == f"1 photo chosen: {os.path.basename(path)}"
    if comment:
        driver.find_element(By.ID, "upload-comment").send_keys(comment)
    if screenshot:
        shot(driver, screenshot)
    driver.find_element(By.ID, "upload-start").click()
    wait(driver).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#uploads li")) > before)
    return driver.find_elements(By.CSS_SELECTOR, "#uploads li")[0]


def photo_ids(driver):
    return [e.get_attribute("data-object-id") for e in driver.find_elements(By.CSS_SELECTOR, "#feed article.photo")]


def test_login_and_upload_with_progress(stack, browser):
    d = browser(DESKTOP)
    login(d, stack, A, "01-uploader")
    comment = f"First light {uuid.uuid4().hex[:6]}"
    item = upload(d, SMALL_PHOTO, comment)
    seen = []
    def finished(_):
        seen.append(int(item.find_element(By.TAG_NAME, "progress").get_attribute("value")))
        return "done" in item.get_attribute("class").split() or "failed" in item.get_attribute("class").split()
    wait(d, 120).until(finished)
    status = item.find_element(By.CLASS_NAME, "upload-status").text
    assert "done" in item.get_attribute("class").split(), status
    progress = item.find_element(By.TAG_NAME, "progress")
    assert progress.get_attribute("value") == "100"
    assert progress.get_attribute("aria-valuetext") == "100%"
    assert int(item.get_attribute("data-sent")) == os.path.getsize(SMALL_PHOTO)
    assert seen == sorted(seen), "progress never goes backwards"
    assert d.find_element(By.ID, "upload-live").get_attribute("textContent") == f"{os.path.basename(SMALL_PHOTO)}: done, the photo is on the wall"
    image_id = item.get_attribute("data-object-id")
    assert image_id and len(image_id) == 10
    article = d.find_element(By.CSS_SELECTOR, f"#feed article[data-object-id='{image_id}']")
    assert photo_ids(d)[0] == image_id, "the new photo is first on the wall"
    assert article.find_element(By.CLASS_NAME, "who").text == A["name"]
    # The comment made with the upload is the poster's caption, not one of the comments.
    assert article.find_element(By.CSS_SELECTOR, ".caption .caption-text").text == comment
    assert article.find_element(By.CSS_SELECTOR, ".caption .caption-who").text == A["name"]
    assert not article.find_elements(By.CSS_SELECTOR, ".comment-list li")
    img = article.find_element(By.CSS_SELECTOR, ".thumb img")
    wait(d).until(lambda _: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) > 0)
    assert img.get_attribute("alt").startswith(f"Photo by {A['name']}")
    shot(d, "01-uploader-3-uploaded")
    # The server has it, owned by A, with the comment.
    status, obj, _ = rest(stack, "GET", f"/classes/WallImage/{image_id}")
    assert status == 200 and obj["userFBId"] == A["id"] and obj["thumbnail"]["name"]
    # Full size in a dialog, closed with Escape, focus back on the thumbnail.
    article.find_element(By.CLASS_NAME, "thumb").click()
    viewer = wait(d).until(EC.visibility_of_element_located((By.ID, "viewer")))
    assert viewer.get_attribute("data-object-id") == image_id
    big = d.find_element(By.ID, "viewer-img")
    wait(d).until(lambda _: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", big) > 0)
    assert "sig=" in big.get_attribute("src"), "signed display URL used as given"
    assert d.execute_script("return arguments[0].naturalWidth", big) > d.execute_script("return arguments[0].naturalWidth", img)
    shot(d, "01-uploader-4-full-size")
    d.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(d).until(EC.invisibility_of_element_located((By.ID, "viewer")))
    assert d.switch_to.active_element.get_attribute("class") == "thumb"
    shared["image_id"] = image_id
    shared["comment"] = comment


def test_friend_sees_the_photo_and_comments(stack, browser):
    image_id = shared.get("image_id") or pytest.skip("needs the uploaded photo")
    d = browser(PHONE)
    session = login(d, stack, B, "02-friend")
    article = wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, f"#feed article[data-object-id='{image_id}']")))
    assert article.find_element(By.CLASS_NAME, "who").text == A["name"]
    assert article.find_element(By.CSS_SELECTOR, ".caption-text").text == shared["comment"]
    d.execute_script("arguments[0].scrollIntoView({block:'center'})", article)
    text = f"Lovely, says {B['name']} {uuid.uuid4().hex[:6]}"
    field = article.find_element(By.CSS_SELECTOR, ".comment-form input")
    assert d.find_element(By.CSS_SELECTOR, f"label[for='{field.get_attribute('id')}']").get_attribute("textContent") == "Add a comment"
    # An earlier mistake leaves an error banner; the next success clears it.
    open_share(d)
    d.find_element(By.ID, "upload-start").click()
    assert d.find_element(By.ID, "notice").text == "Choose one or more photos first."
    assert d.find_element(By.ID, "share-error").text == "Choose one or more photos first."
    sheet = d.find_element(By.ID, "share").rect
    screen = d.execute_script("return innerHeight")
    assert sheet["height"] < screen / 2 and sheet["y"] + sheet["height"] >= screen - 2, f"a bottom sheet, not most of the screen: {sheet}, {screen}"
    shot(d, "02-friend-3a-share-sheet")
    ActionChains(d).send_keys(Keys.ESCAPE).perform()  # Escape closes the panel
    wait(d).until(EC.invisibility_of_element_located((By.ID, "share")))
    # The comment field opens on demand.
    assert not field.is_displayed()
    article.find_element(By.CLASS_NAME, "comment-open").click()
    assert field.is_displayed() and d.switch_to.active_element == field
    field.send_keys(text)
    field.send_keys(Keys.ENTER)  # the keyboard submits the form
    wait(d).until(lambda _: text in [e.text for e in article.find_elements(By.CSS_SELECTOR, ".comment-text")])
    assert article.find_element(By.CLASS_NAME, "comment-status").text == "Comment posted."
    assert not d.find_element(By.ID, "notice").is_displayed(), "the success cleared the stale error"
    shot(d, "02-friend-3-commented")
    where = urllib.parse.quote(json.dumps({"imageObjectId": image_id, "comment": text}))
    status, found, _ = rest(stack, "GET", f"/classes/WallImageComment?where={where}")
    assert status == 200 and len(found["results"]) == 1 and found["results"][0]["userFBId"] == B["id"]
    # More comments than the feed carries (3): "Show all" fetches every one, oldest first.
    extra = [f"comment {i} {uuid.uuid4().hex[:4]}" for i in range(3)]
    for t in extra:
        status, _, _ = rest(stack, "POST", "/classes/WallImageComment", {"comment": t, "imageObjectId": image_id},
                            session=session["sessionToken"], master=False)
        assert status == 201
    d.refresh()
    article = wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, f"#feed article[data-object-id='{image_id}']")))
    # The two latest; the caption (the oldest comment) is beyond the feed's three, so not shown yet.
    assert [e.text for e in article.find_elements(By.CSS_SELECTOR, ".comment-text")] == extra[1:]
    more = article.find_element(By.CLASS_NAME, "more-comments")
    assert more.text == "View all 5 comments"
    d.execute_script("arguments[0].scrollIntoView({block:'center'})", more)
    more.click()
    wait(d).until(lambda _: len(article.find_elements(By.CSS_SELECTOR, ".comment-text")) == 4)
    assert [e.text for e in article.find_elements(By.CSS_SELECTOR, ".comment-text")] == [text] + extra
    names = [e.text for e in article.find_elements(By.CSS_SELECTOR, ".comment-list strong")]
    assert names == [B["name"]] * 4
    assert article.find_element(By.CSS_SELECTOR, ".caption-text").text == shared["comment"], "all comments read: the caption is known"
    assert not more.is_displayed()
    # Phone layout: nothing wider than the screen.
    assert d.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    # The session ends elsewhere while a comment is being typed: back to the login, and the typed
    # comment is waiting in its field after logging in again.
    status, _, _ = rest(stack, "POST", "/logout", session=session["sessionToken"], master=False)
    assert status == 200
    draft = f"draft {uuid.uuid4().hex[:6]}"
    field = article.find_element(By.CSS_SELECTOR, ".comment-form input")
    if not field.is_displayed():
        article.find_element(By.CLASS_NAME, "comment-open").click()
    field.send_keys(draft)
    field.send_keys(Keys.ENTER)
    wait(d).until(EC.visibility_of_element_located((By.ID, "login-facebook")))
    assert d.find_element(By.ID, "notice").text == "Your session has ended: please log in again."
    session = login(d, stack, B, "02-friend-relogin")
    field = wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, f"#feed article[data-object-id='{image_id}'] .comment-form input")))
    assert field.get_attribute("value") == draft
    assert field.is_displayed(), "the field with the restored draft is open"
    # Logout ends the session on the server too.
    d.find_element(By.ID, "logout").click()
    wait(d).until(EC.visibility_of_element_located((By.ID, "login-facebook")))
    assert d.execute_script("return localStorage.getItem('photowall.session')") is None
    status, _, _ = rest(stack, "GET", "/users/me", session=session["sessionToken"], master=False)
    assert status in (400, 404)


def test_drop_a_photo(stack, browser):
    """Drag and drop: a JPEG File dropped on the drop zone uploads like a chosen one."""
    image_id = shared.get("image_id") or pytest.skip("needs the uploaded photo")
    d = browser(DESKTOP)
    login(d, stack, B, "02b-drop")
    src = d.find_element(By.CSS_SELECTOR, f"#feed article[data-object-id='{image_id}'] .thumb img").get_attribute("src")
    d.execute_async_script("""
        const [src, done] = arguments;
        fetch(src).then(r => r.blob()).then(blob => {
          const dt = new DataTransfer();
          dt.items.add(new File([blob], 'dropped.jpg', {type: 'image/jpeg', lastModified: 1}));
          const zone = document.getElementById('drop');
          zone.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
          zone.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
          done();
        });""", src)
    item = wait(d).until(lambda _: d.find_element(By.CSS_SELECTOR, "#uploads li[data-name='dropped.jpg']"))
    wait(d, 60).until(lambda _: {"done", "failed"} & set(item.get_attribute("class").split()))
    assert "done" in item.get_attribute("class").split(), item.find_element(By.CLASS_NAME, "upload-status").text
    assert item.find_element(By.TAG_NAME, "progress").get_attribute("value") == "100"
    new_id = item.get_attribute("data-object-id")
    assert photo_ids(d)[0] == new_id
    assert d.find_element(By.CSS_SELECTOR, f"#feed article[data-object-id='{new_id}'] .who").text == B["name"]
    shot(d, "02b-drop-3-dropped")
    shared["dropped_id"] = new_id


def test_stranger_does_not_see_the_photo(stack, browser):
    image_id = shared.get("image_id") or pytest.skip("needs the uploaded photo")
    d = browser(PHONE)
    login(d, stack, C, "03-stranger")
    assert image_id not in photo_ids(d)
    assert d.find_element(By.ID, "wall-status").text.startswith("The wall is empty")
    shot(d, "03-stranger-3-wall")
    # Not a photo: refused in the page, said plainly.
    item = upload(d, os.path.join(ROOT, "Samples", "facebook", "README.md"))
    assert item.find_element(By.CLASS_NAME, "upload-status").text == "Failed: only JPEG, PNG, WebP, HEIC and AVIF photos can be shared."
    assert d.find_element(By.ID, "notice").text == "README.md: only JPEG, PNG, WebP, HEIC and AVIF photos can be shared."
    # Text named .jpg: its first bytes give it away, so nothing is sent; the failed row can be dismissed.
    fake = os.path.join(stack["data"], "notaphoto.jpg")
    with open(fake, "w") as f:
        f.write("not a photo at all\n" * 1000)
    item = upload(d, fake)
    wait(d).until(lambda _: "failed" in item.get_attribute("class").split())
    assert item.find_element(By.CLASS_NAME, "upload-status").text == \
        "Failed: this file is not a JPEG, PNG, WebP, HEIC or AVIF photo (its contents say otherwise)."
    assert item.get_attribute("data-upload-url") is None, "no tus upload was created for it"
    assert "failed" in d.find_element(By.ID, "upload-live").get_attribute("textContent")
    shot(d, "03-stranger-3b-not-a-photo")
    item.find_element(By.CLASS_NAME, "dismiss").click()
    wait(d).until(lambda _: not d.find_elements(By.CSS_SELECTOR, "#uploads li[data-name='notaphoto.jpg']"))
    assert not d.find_element(By.ID, "notice").is_displayed(), "dismissing the row clears its message"
    # A session the server no longer knows: back to the login, with the reason.
    d.execute_script("const s = JSON.parse(localStorage.getItem('photowall.session')); s.sessionToken = 'r:' + '0'.repeat(32);"
                     "localStorage.setItem('photowall.session', JSON.stringify(s))")
    d.refresh()
    wait(d).until(EC.visibility_of_element_located((By.ID, "login-facebook")))
    assert d.find_element(By.ID, "notice").text == "Your session has ended: please log in again."
    shot(d, "03-stranger-4-session-ended")


def seed(stack, owner_fb_id, count):
    """count WallImages of the user with `owner_fb_id`, through the REST API with the master key."""
    status, users, _ = rest(stack, "GET", "/users?where=" + urllib.parse.quote(json.dumps({"fbId": owner_fb_id})))
    assert status == 200 and len(users["results"]) == 1
    owner = users["results"][0]["objectId"]
    with open(os.path.join(ROOT, "Samples", "photos", "landscape_o1.jpg"), "rb") as f:
        status, file, _ = rest(stack, "POST", "/files/seed.jpg", raw=f.read(), headers={"Content-Type": "image/jpeg"})
    assert status == 201, file
    ids = []
    for _ in range(count):
        status, obj, _ = rest(stack, "POST", "/classes/WallImage", {
            "image": {"__type": "File", "name": file["name"]}, "userFBId": owner_fb_id,
            "user": {"__type": "Pointer", "className": "_User", "objectId": owner}})
        assert status == 201, obj
        ids.append(obj["objectId"])
    return ids


def test_scrolling_loads_the_next_page(stack, browser):
    seeded = seed(stack, A["id"], 26)
    d = browser(PHONE)
    session = login(d, stack, A, "04-scroll")
    page = 12
    wait(d).until(lambda _: len(photo_ids(d)) == page)
    first = photo_ids(d)
    assert first == list(reversed(seeded))[:page], "newest first"
    shot(d, "04-scroll-3-first-page")
    d.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait(d).until(lambda _: len(photo_ids(d)) == 2 * page)
    second = photo_ids(d)
    assert second[:page] == first and second[page:] == list(reversed(seeded))[page:2 * page]
    shot(d, "04-scroll-4-second-page")
    d.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait(d).until(lambda _: d.find_element(By.ID, "wall-status").text.startswith("That's all"))
    ids = photo_ids(d)
    # The seeded photos, then B's dropped one and A's first upload (A sees a friend's photos too).
    older = [x for x in (shared.get("dropped_id"), shared.get("image_id")) if x]
    assert ids == list(reversed(seeded)) + older and len(set(ids)) == len(ids)
    assert not d.find_element(By.ID, "load-more").is_displayed()
    # The same order as the feed function gives over REST.
    status, feed, _ = rest(stack, "POST", "/functions/feed", {"limit": 100}, session=session["sessionToken"], master=False)
    assert status == 200 and [i["objectId"] for i in feed["result"]["images"]] == ids
    shot(d, "04-scroll-5-all")
    shared["wall_ids"] = ids


def test_load_more_button_from_the_keyboard(stack, browser):
    """Without IntersectionObserver (old browsers), the visible "Load more" button pages, pressed with Enter."""
    ids = shared.get("wall_ids") or pytest.skip("needs the seeded wall")
    d = browser(DESKTOP)
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": "delete window.IntersectionObserver;"})
    login(d, stack, A, "05-keyboard")
    assert photo_ids(d) == ids[:12]
    more = d.find_element(By.ID, "load-more")
    assert more.is_displayed() and more.text == "Load more"
    d.execute_script("arguments[0].focus()", more)
    assert d.switch_to.active_element == more
    shot(d, "05-keyboard-3-focused")
    more.send_keys(Keys.ENTER)
    wait(d).until(lambda _: len(photo_ids(d)) == 24)
    assert photo_ids(d) == ids[:24] and more.is_displayed()
    assert d.switch_to.active_element == more, "the button keeps the focus while it loads"
    d.switch_to.active_element.send_keys(Keys.ENTER)
    wait(d).until(lambda _: d.find_element(By.ID, "wall-status").text == f"That's all: {len(ids)} photos.")
    assert photo_ids(d) == ids and not more.is_displayed()
    assert d.switch_to.active_element.get_attribute("id") == "wall-status", "focus lands on the status, not lost"


# IntersectionObserver callbacks are tasks of their own: the first one, computed on the empty wall, may run
# after the first page came (the CI flake of test_scrolling_loads_the_next_page: the second page loaded
# unasked, and 12 photos were never seen). Held back here until photos are shown, so that it surely does.
LATE_INTERSECTIONS = """
const Native = window.IntersectionObserver;
window.IntersectionObserver = class extends Native {
  constructor(callback, options) {
    const held = [];
    const flush = () => {
      if (!document.querySelector('#feed article.photo')) return setTimeout(flush, 20);
      while (held.length) callback(...held.shift());
    };
    super((entries, o) => { held.push([entries, o]); if (held.length === 1) flush(); }, options);
  }
};
"""


def test_a_late_intersection_entry_does_not_load_a_page_unasked(stack, browser):
    """The sentinel's entry from the empty wall, delivered after the first page pushed it down, loads nothing."""
    d = browser(PHONE)
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": LATE_INTERSECTIONS})
    session = login(d, stack, A, "05b-late-entry")
    status, feed, _ = rest(stack, "POST", "/functions/feed", {"limit": 24}, session=session["sessionToken"], master=False)
    ids = [i["objectId"] for i in feed["result"]["images"]]
    assert status == 200 and len(ids) == 24, "the photos seeded for test_scrolling_loads_the_next_page"
    wait(d).until(lambda _: len(photo_ids(d)) >= 12)
    time.sleep(1.5)  # past the held-back entry
    assert photo_ids(d) == ids[:12], "only the first page, until someone scrolls"
    d.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait(d).until(lambda _: len(photo_ids(d)) >= 24)
    assert photo_ids(d)[:24] == ids[:24]


def upload_offset(stack, url):
    status, _, headers = rest(stack, "HEAD", stack["base"] + url, headers={"Tus-Resumable": "1.0.0"})
    assert status == 200
    return int(headers["Upload-Offset"]), int(headers["Upload-Length"])


def patch_offsets(driver):
    """Upload-Offset of every PATCH the page sent since the last call (from Chrome's network log)."""
    out = []
    for entry in driver.get_log("performance"):
        m = json.loads(entry["message"])["message"]
        if m["method"] == "Network.requestWillBeSent" and m["params"]["request"]["method"] == "PATCH":
            h = {k.lower(): v for k, v in m["params"]["request"]["headers"].items()}
            out.append(int(h["upload-offset"]))
    return out


def test_interrupted_upload_resumes_from_the_server_offset(stack, browser):
    d = browser(DESKTOP)
    login(d, stack, A, "06-resume")
    chunk = CHUNK
    photo = resume_photos()[0]
    d.execute_script(f"localStorage.setItem('photowall.chunkBytes', '{chunk}')")
    d.refresh()
    wait(d).until(EC.visibility_of_element_located((By.ID, "share-open")))
    size = os.path.getsize(photo)
    assert size > 8 * chunk, "the resume test needs a photo of several chunks"
    # A slow line: about 160 kB/s up, so the upload is still running when the page reloads.
    d.set_network_conditions(offline=False, latency=20, download_throughput=4 * 1024 * 1024, upload_throughput=160 * 1024)
    patch_offsets(d)
    item = upload(d, photo)
    wait(d).until(lambda _: item.get_attribute("data-upload-url"))
    url = item.get_attribute("data-upload-url")
    wait(d, 60).until(lambda _: upload_offset(stack, url)[0] >= 3 * chunk)
    shot(d, "06-resume-3-uploading")
    before = patch_offsets(d)
    assert before and before[0] == 0 and max(before) < size
    cut_at, _ = upload_offset(stack, url)
    d.refresh()  # the transfer in flight is cut; the page finds the kept file and resumes by itself
    d.delete_network_conditions()
    wait(d).until(lambda _: d.find_elements(By.CSS_SELECTOR, "#uploads li[data-resumed-from]"))
    item = d.find_element(By.CSS_SELECTOR, "#uploads li[data-resumed-from]")
    shot(d, "06-resume-4-after-reload")
    resumed = int(item.get_attribute("data-resumed-from"))
    assert cut_at <= resumed < size, f"resumed at the server's offset ({resumed}), not from 0"
    wait(d, 120).until(lambda _: {"done", "failed"} & set(item.get_attribute("class").split()))
    assert "done" in item.get_attribute("class").split(), item.find_element(By.CLASS_NAME, "upload-status").text
    assert item.get_attribute("data-upload-url") == url
    assert int(item.get_attribute("data-first-patch-offset")) == resumed
    after = patch_offsets(d)
    assert after and min(after) == resumed, f"after the reload every PATCH starts at or past {resumed}: {after}"
    assert item.find_element(By.TAG_NAME, "progress").get_attribute("value") == "100"
    assert upload_offset(stack, url) == (size, size)
    image_id = item.get_attribute("data-object-id")
    assert photo_ids(d)[0] == image_id
    assert d.execute_script("return Object.keys(localStorage).filter(k => k.startsWith('photowall.tus:')).length") == 0
    kept = d.execute_async_script("""const done = arguments[0];
        const r = indexedDB.open('photowall', 1);
        r.onsuccess = () => { const q = r.result.transaction('pending-uploads').objectStore('pending-uploads').count();
                              q.onsuccess = () => done(q.result); };
        r.onerror = () => done(-1);""")
    assert kept == 0, "the kept file is dropped once the photo is posted"
    shot(d, "06-resume-5-done")


def test_upload_survives_a_dropped_network(stack, browser):
    d = browser(DESKTOP)
    login(d, stack, B, "07-offline")
    chunk = CHUNK
    d.execute_script(f"localStorage.setItem('photowall.chunkBytes', '{chunk}')")
    d.refresh()
    wait(d).until(EC.visibility_of_element_located((By.ID, "share-open")))
    photo = resume_photos()[1]
    size = os.path.getsize(photo)
    d.set_network_conditions(offline=False, latency=20, download_throughput=4 * 1024 * 1024, upload_throughput=160 * 1024)
    patch_offsets(d)
    item = upload(d, photo, "made it through")
    wait(d).until(lambda _: item.get_attribute("data-upload-url"))
    url = item.get_attribute("data-upload-url")
    wait(d, 60).until(lambda _: upload_offset(stack, url)[0] >= 2 * chunk)
    d.set_network_conditions(offline=True, latency=0, download_throughput=0, upload_throughput=0)
    wait(d, 30).until(lambda _: item.get_attribute("data-retries"))
    status = item.find_element(By.CLASS_NAME, "upload-status").text
    assert "trying again" in status or status.startswith("You're offline"), status
    shot(d, "07-offline-3-retrying")
    cut_at, _ = upload_offset(stack, url)
    time.sleep(1.5)
    d.delete_network_conditions()  # back online: the page resumes by itself
    wait(d, 120).until(lambda _: {"done", "failed"} & set(item.get_attribute("class").split()))
    assert "done" in item.get_attribute("class").split(), item.find_element(By.CLASS_NAME, "upload-status").text
    offsets = patch_offsets(d)
    assert offsets[0] == 0 and offsets.count(0) == 1, f"never sent from 0 again: {offsets}"
    assert offsets == sorted(offsets) and cut_at in offsets
    assert upload_offset(stack, url) == (size, size)
    image_id = item.get_attribute("data-object-id")
    article = d.find_element(By.CSS_SELECTOR, f"#feed article[data-object-id='{image_id}']")
    assert article.find_element(By.CSS_SELECTOR, ".caption-text").text == "made it through"
    shot(d, "07-offline-4-done")
