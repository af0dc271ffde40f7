"""The live wall in two Chromium sessions on their own server: a friend's new photo waits behind "1 new photo"
(the wall doesn't move), appears on top when asked; a comment appears under its photo; a deleted photo goes;
after the server restarts the page reconnects and catches up on what happened while it was away (a new photo
behind the button, a comment under its photo, a deleted photo gone), each exactly once; a logout elsewhere ends
it (209)."""
import os
import shutil
import tempfile

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import DESKTOP, ROOT, rest, start_server, stop
from test_wall import A, B, login, seed, shot, wait

SAMPLE = os.path.join(ROOT, "Samples", "photos", "landscape_o1.jpg")


def photo_ids(driver):
    """The wall's photo ids, top first, read in one script: live removals can't make an element go stale
    between finding it and reading it (as with `find_elements` and then each `get_attribute`)."""
    return driver.execute_script("return [...document.querySelectorAll('#feed article.photo')].map((e) => e.dataset.objectId)")


def comments_of(driver, image_id):
    """The comment ids listed under a photo, in one script (the list may be redrawn meanwhile)."""
    return driver.execute_script("return [...document.querySelectorAll(`#photo-${arguments[0]} .comment-list li`)].map((li) => li.dataset.objectId)",
                                 image_id)


def post_photo(api, session, caption):
    with open(SAMPLE, "rb") as f:
        status, file, _ = rest(api, "POST", "/files/live.jpg", raw=f.read(), session=session, master=False,
                               headers={"Content-Type": "image/jpeg"})
    assert status == 201, file
    status, made, _ = rest(api, "POST", "/classes/WallImage", {"image": {"__type": "File", "name": file["name"]}, "caption": caption},
                           session=session, master=False)
    assert status == 201, made
    return made["objectId"]


def test_friends_photo_comment_delete_reconnect_and_logout_arrive_live(stack, browser):
    data = tempfile.mkdtemp(prefix="photowall-live-")
    srv, port = start_server(data, stack["fb_port"])
    own = {**stack, "base": f"http://127.0.0.1:{port}", "api": f"http://127.0.0.1:{port}/parse"}
    try:
        poster, viewer = browser(DESKTOP), browser(DESKTOP)
        a = login(poster, own, A, "live-a")
        b = login(viewer, own, B, "live-b")
        wait(viewer).until(lambda d: d.execute_script("return document.body.dataset.live") == "on")
        before = photo_ids(viewer)
        viewer.execute_script("window.scrollTo(0, 0)")

        first = post_photo(own, a["sessionToken"], "live one")
        button = wait(viewer).until(EC.visibility_of_element_located((By.ID, "new-photos")))
        wait(viewer).until(lambda _: button.text == "1 new photo")
        assert photo_ids(viewer) == before  # nothing moved until asked
        shot(viewer, "live-1-new-photo-button")
        button.click()
        wait(viewer).until(lambda _: photo_ids(viewer)[:1] == [first])
        assert not button.is_displayed()
        assert viewer.find_element(By.CSS_SELECTOR, f"#photo-{first} .who").text == A["name"]
        shot(viewer, "live-2-shown")

        status, comment, _ = rest(own, "POST", "/classes/WallImageComment", {"comment": "seen live?", "imageObjectId": first},
                                  session=a["sessionToken"], master=False)
        assert status == 201, comment
        li = wait(viewer).until(EC.presence_of_element_located(
            (By.CSS_SELECTOR, f"#photo-{first} .comment-list li[data-object-id='{comment['objectId']}']")))
        assert "seen live?" in li.text

        doomed = post_photo(own, a["sessionToken"], "deleted in the gap")
        wait(viewer).until(lambda _: button.is_displayed() and button.text == "1 new photo")
        button.click()
        wait(viewer).until(lambda _: photo_ids(viewer)[:2] == [doomed, first])

        # The server restarts, and the viewer's page stays away (frozen: no timer runs, so no reconnect)
        # while the poster adds a photo, comments on a shown photo and deletes another: none of that can
        # reach the viewer live. Back, the page reconnects by itself and catches up through the feed.
        stop(srv)
        srv = None
        wait(viewer).until(lambda d: d.execute_script("return document.body.dataset.live") == "off")
        viewer.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "frozen"})
        srv, _ = start_server(data, stack["fb_port"], port)
        second = post_photo(own, a["sessionToken"], "posted across the gap")
        status, missed, _ = rest(own, "POST", "/classes/WallImageComment", {"comment": "said in the gap", "imageObjectId": first},
                                 session=a["sessionToken"], master=False)
        assert status == 201, missed
        assert rest(own, "DELETE", f"/classes/WallImage/{doomed}", session=a["sessionToken"], master=False)[0] == 200
        viewer.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "active"})
        wait(viewer, 60).until(lambda d: d.execute_script("return document.body.dataset.live") == "on")
        wait(viewer, 60).until(lambda _: button.is_displayed() and button.text == "1 new photo")
        wait(viewer).until(lambda _: doomed not in photo_ids(viewer))
        comment_ids = lambda: comments_of(viewer, first)
        wait(viewer).until(lambda _: missed["objectId"] in comment_ids())
        assert comment_ids() == [comment["objectId"], missed["objectId"]]  # each once, oldest first
        assert viewer.find_element(By.CSS_SELECTOR, f"#photo-{first} .comment-list li[data-object-id='{missed['objectId']}'] .comment-text").text == "said in the gap"
        shot(viewer, "live-3-caught-up")
        button.click()
        wait(viewer).until(lambda _: photo_ids(viewer)[:2] == [second, first])
        assert len(photo_ids(viewer)) == len(set(photo_ids(viewer)))  # nothing doubled
        assert photo_ids(viewer).count(second) == 1 and doomed not in photo_ids(viewer)

        assert rest(own, "DELETE", f"/classes/WallImage/{first}", session=a["sessionToken"], master=False)[0] == 200
        wait(viewer).until(lambda _: first not in photo_ids(viewer))
        assert photo_ids(viewer)[:1] == [second]
        assert viewer.find_element(By.ID, "wall-status").text == f"{len(photo_ids(viewer))} photos shown."
        shot(viewer, "live-4-deleted")

        # Logged out elsewhere: the live wall hears it at once (209) and stops, without reconnecting; the
        # page's next call then asks for a login (and keeps a comment being typed, as before).
        assert rest(own, "POST", "/logout", {}, session=b["sessionToken"], master=False)[0] == 200
        wait(viewer).until(lambda d: d.execute_script("return document.body.dataset.live") == "ended")
        shot(viewer, "live-5-logged-out")
    finally:
        if srv:
            stop(srv)
        shutil.rmtree(data, ignore_errors=True)


# Before any page script: the page's feed reads of the catch-up's size (100 photos) are made 2 photos long, so
# a gap of more than a page (and more than the 500 photos the old catch-up read at most) costs 11 photos
# here, not 500; and while `window.failCatchUpRead` is N, the Nth such read fails once (a network error).
SMALL_CATCH_UP_PAGES = """
(() => {
  const fetch = window.fetch;
  let reads = 0;
  window.fetch = function (input, init) {
    if (String(input).endsWith('/functions/feed') && typeof init?.body === 'string') {
      const body = JSON.parse(init.body);
      if (body.limit === 100) {
        reads += 1;
        window.catchUpReads = reads;
        if (window.failCatchUpRead === reads) {
          window.failCatchUpRead = 0;
          return Promise.reject(new TypeError('Failed to fetch'));
        }
        init = { ...init, body: JSON.stringify({ ...body, limit: 2 }) };
      }
    }
    return fetch.call(this, input, init);
  };
})();
"""


def test_a_gap_of_many_pages_is_caught_up_whole(stack, browser):
    """After a gap with more new photos than a catch-up page (and than the old 5-page cap), the page reads the
    feed's cursor down to the photos it shows: every new photo waits behind the button once, a comment on and
    the deletion of the oldest shown photos (below all the new ones) are caught up too; a read that fails
    midway is tried again."""
    data = tempfile.mkdtemp(prefix="photowall-live-gap-")
    srv, port = start_server(data, stack["fb_port"])
    own = {**stack, "base": f"http://127.0.0.1:{port}", "api": f"http://127.0.0.1:{port}/parse"}
    try:
        poster, viewer = browser(DESKTOP), browser(DESKTOP)
        a = login(poster, own, A, "gap-a")
        viewer.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SMALL_CATCH_UP_PAGES})
        login(viewer, own, B, "gap-b")
        wait(viewer).until(lambda d: d.execute_script("return document.body.dataset.live") == "on")
        shown = [post_photo(own, a["sessionToken"], f"shown {i}") for i in range(3)]  # oldest first; they come live
        button = wait(viewer).until(EC.visibility_of_element_located((By.ID, "new-photos")))
        wait(viewer).until(lambda _: button.text == "3 new photos")
        button.click()
        wait(viewer).until(lambda _: photo_ids(viewer) == shown[::-1])

        stop(srv)
        srv = None
        wait(viewer).until(lambda d: d.execute_script("return document.body.dataset.live") == "off")
        viewer.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "frozen"})
        srv, _ = start_server(data, stack["fb_port"], port)
        gap = seed(own, A["id"], 11)  # 5½ pages of 2: more than the old cap of 5 pages
        status, missed, _ = rest(own, "POST", "/classes/WallImageComment", {"comment": "said below the gap", "imageObjectId": shown[1]},
                                 session=a["sessionToken"], master=False)
        assert status == 201, missed
        assert rest(own, "DELETE", f"/classes/WallImage/{shown[0]}", session=a["sessionToken"], master=False)[0] == 200
        viewer.execute_script("window.failCatchUpRead = 3")  # the third page's read fails once
        viewer.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "active"})
        wait(viewer, 60).until(lambda d: d.execute_script("return document.body.dataset.live") == "on")
        wait(viewer, 60).until(lambda _: shown[0] not in photo_ids(viewer))
        assert viewer.execute_script("return window.failCatchUpRead") == 0  # the failure did happen
        comment_ids = lambda: comments_of(viewer, shown[1])
        wait(viewer).until(lambda _: comment_ids() == [missed["objectId"]])
        wait(viewer).until(lambda _: button.is_displayed() and button.text == "11 new photos")
        assert photo_ids(viewer) == [shown[2], shown[1]]  # nothing moved until asked
        shot(viewer, "live-gap-1-caught-up")
        button.click()
        wait(viewer).until(lambda _: photo_ids(viewer) == gap[::-1] + [shown[2], shown[1]])  # each once, newest first
        assert comment_ids() == [missed["objectId"]]
        assert viewer.find_element(By.ID, "wall-status").text == "13 photos shown."
        shot(viewer, "live-gap-2-shown")
    finally:
        if srv:
            stop(srv)
        shutil.rmtree(data, ignore_errors=True)
