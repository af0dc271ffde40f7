// The live wall: Parse LiveQuery on this origin (ws(s)://host/<serverPath>), subscribed to WallImage and
// WallImageComment with `where: {}`. The server decides every event per viewer by the rules the feed
// follows, so these are exactly the friends' photos the wall shows and the comments on them.
// - New photos wait behind an "N new photos" button at the top: the page never moves under the reader.
// - New comments appear under their photo; a deleted photo (or one no longer shared) goes.
// - The socket reconnects with backoff (1 s doubling to 30 s) and, after a gap, catches up through the
//   feed's cursor, page after page, down to the oldest photo shown (the feed's end when none is): new photos
//   go behind the button, shown photos get the comments the feed has now, photos deleted meanwhile go
//   (nothing missed, nothing doubled: ids are checked). There is no cap on the pages: what is read is bounded
//   by the page itself, the photos posted during the gap plus those shown. A catch-up that fails (network,
//   server) is tried again with backoff, and one asked for while another runs runs again after it.
// Own photos and comments are left to the uploader and the comment form, which add them themselves.

const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30000;
/** Photos per feed page read to catch up after a gap (the feed's largest page). */
const CATCH_UP_PAGE_SIZE = 100;
const $ = (id) => document.getElementById(id);

export class LiveWall {
  constructor(api, config, { session, wall, onAuthError }) {
    this.api = api;
    this.config = config;
    this.session = session;
    this.wall = wall;
    this.onAuthError = onAuthError;
    this.pending = new Map(); // objectId → feed entry, not shown yet
    this.duringCatchUp = null; // while a catch-up reads the feed: {added: Map objectId → comment, removed: Set}
    this.catchingUp = false; // a catch-up is running
    this.catchUpAgain = false; // another gap came while it ran: catch up once more after it
    this.catchUpRetry = null; // the timer of a failed catch-up's retry
    this.catchUpBackoff = BACKOFF_FIRST_MS;
    this.backoff = BACKOFF_FIRST_MS;
    this.everFollowed = false;
    this.ended = false;
    this.button = $('new-photos');
    this.button.addEventListener('click', () => this.reveal());
  }

  start() { this.connect(); }

  connect() {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}${this.config.serverPath}`);
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ op: 'connect', applicationId: this.config.appId, sessionToken: this.session.sessionToken }));
    ws.onmessage = (e) => { try { this.message(JSON.parse(e.data)); } catch { /* not ours */ } };
    ws.onclose = () => {
      if (this.ended) return;
      document.body.dataset.live = 'off';
      setTimeout(() => this.connect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX_MS);
    };
  }

  message(m) {
    switch (m.op) {
      case 'connected':
        for (const [requestId, className] of [[1, 'WallImage'], [2, 'WallImageComment']]) {
          this.ws.send(JSON.stringify({ op: 'subscribe', requestId, query: { className, where: {} } }));
        }
        break;
      case 'subscribed':
        if (m.requestId !== 2) break;
        this.backoff = BACKOFF_FIRST_MS;
        if (this.everFollowed) this.catchUp();
        this.everFollowed = true;
        document.body.dataset.live = 'on';
        break;
      case 'error':
        if (m.code === 209) {
          // The session ended elsewhere: no more events and no reconnect. The page itself goes back to
          // the login on its next call (as before), so a comment being typed is kept as a draft.
          this.ended = true;
          this.ws.close();
          document.body.dataset.live = 'ended';
        }
        break;
      case 'create':
      case 'enter':
        if (m.requestId === 1) this.photo(m.object); else this.comment(m.object);
        break;
      case 'delete':
      case 'leave':
        if (m.requestId === 1) this.removePhoto(m.object.objectId); else this.removeComment(m.object.objectId);
        break;
      default:
        break;
    }
  }

  /** A photo from the live event, as a feed entry (the event carries what the feed does). */
  photo(o) {
    if (o.user?.objectId === this.session.objectId) return;
    if (this.wall.ids.has(o.objectId) || this.pending.has(o.objectId)) return;
    this.pending.set(o.objectId, {
      objectId: o.objectId,
      user: o.user ? { objectId: o.user.objectId, name: o.user.name, fbId: o.user.fbId } : null,
      createdAt: o.createdAt, image: o.image, thumbnail: o.thumbnail, display: o.display,
      width: o.width, height: o.height, caption: o.caption, commentCount: 0, comments: [],
    });
    this.showButton();
  }

  showButton() {
    const n = this.pending.size;
    this.button.hidden = n === 0;
    this.button.textContent = n === 1 ? '1 new photo' : `${n} new photos`;
  }

  /** Shows the waiting photos at the top, newest first, and goes there. */
  reveal() {
    const entries = [...this.pending.values()].sort((a, b) => new Date(a.createdAt) - new Date(b.createdAt));
    this.pending.clear();
    for (const e of entries) this.wall.add(e);
    this.showButton();
    window.scrollTo({ top: 0 });
    document.querySelector('#feed .thumb')?.focus({ preventScroll: true });
  }

  comment(c) {
    if (c.user?.objectId === this.session.objectId) return;
    const node = document.getElementById(`photo-${c.imageObjectId}`);
    if (!node || node.querySelector(`.comment-list li[data-object-id="${CSS.escape(c.objectId)}"]`)) return;
    node.querySelector('.comment-list').append(this.wall.comment({
      objectId: c.objectId, comment: c.comment, createdAt: c.createdAt,
      user: c.user ? { objectId: c.user.objectId, name: c.user.name } : null,
    }));
    const count = Number(node.dataset.commentCount || 0) + 1;
    node.dataset.commentCount = String(count);
    this.duringCatchUp?.added.set(c.objectId, c);
    this.wall.layout?.layoutAll();
  }

  removePhoto(objectId) {
    this.pending.delete(objectId);
    this.showButton();
    const node = document.getElementById(`photo-${objectId}`);
    if (!node) return;
    node.remove();
    this.wall.ids.delete(objectId);
    this.wall.images.delete(objectId);
    this.wall.layout?.layoutAll();
    this.wall.status.textContent = `${this.wall.ids.size} photos shown.`;
  }

  removeComment(objectId) {
    this.duringCatchUp?.removed.add(objectId);
    document.querySelector(`#feed .comment-list li[data-object-id="${CSS.escape(objectId)}"]`)?.remove();
  }

  /** After a gap: the feed's newest pages down to the oldest photo shown, so what the gap changed converges:
   *  photos new to the page wait behind the button, shown photos get their comments as the feed has them
   *  now, and shown (or waiting) photos the feed no longer has in the range read are removed. One catch-up
   *  runs at a time; a gap that comes while it runs is caught up by another pass right after it. When the
   *  feed can't be read (not an ended session), it is tried again after 1 s, doubling to 30 s. */
  async catchUp() {
    clearTimeout(this.catchUpRetry);
    this.catchUpRetry = null;
    if (this.catchingUp) { this.catchUpAgain = true; return; }
    this.catchingUp = true;
    let outcome = 'done';
    try {
      do {
        this.catchUpAgain = false;
        outcome = await this.catchUpPass();
      } while (this.catchUpAgain && outcome === 'done' && !this.ended);
    } finally {
      this.catchingUp = false;
    }
    if (outcome === 'failed' && !this.ended) {
      this.catchUpRetry = setTimeout(() => this.catchUp(), this.catchUpBackoff);
      this.catchUpBackoff = Math.min(this.catchUpBackoff * 2, BACKOFF_MAX_MS);
    } else if (outcome === 'done') {
      this.catchUpBackoff = BACKOFF_FIRST_MS;
    }
  }

  /** One read of the feed down to the oldest photo shown (see `catchUp`) → 'done'; 'failed' when the feed
   *  could not be read to there, 'ended' when the session has (what was read is kept; nothing is removed
   *  on a partial read). */
  async catchUpPass() {
    const shown = new Set(this.wall.ids); // a photo the page adds meanwhile is not judged by this read
    const waiting = new Set(this.pending.keys());
    const time = (entry) => Date.parse(entry.createdAt);
    // Nothing shown: every photo the feed has is new to the page, so the read goes to the feed's end.
    const oldest = Math.min(...[...shown].map((id) => time(this.wall.images.get(id))));
    const seen = new Set();
    let cursor = null;
    let readTo = Infinity; // createdAt of the oldest photo read
    let end = false;
    this.duringCatchUp = { added: new Map(), removed: new Set() };
    try {
      // Page after page through the feed's keyset cursor, until a page goes past the oldest photo shown
      // (strictly: photos sharing its time may lie on the next page) or the feed ends. No cap: the read is
      // bounded by what the gap added plus what the page shows.
      for (;;) {
        const body = { limit: CATCH_UP_PAGE_SIZE };
        if (cursor) body.cursor = cursor;
        const { result } = await this.api.call('POST', '/functions/feed', body);
        for (const image of result.images) {
          seen.add(image.objectId);
          readTo = Math.min(readTo, time(image));
          if (shown.has(image.objectId)) { this.refreshComments(image); continue; }
          if (this.wall.ids.has(image.objectId) || this.pending.has(image.objectId)) continue;
          if (image.user?.objectId === this.session.objectId) continue;
          this.pending.set(image.objectId, image);
        }
        this.showButton();
        if (!result.nextCursor || result.nextCursor === cursor || result.images.length === 0) { end = true; break; }
        cursor = result.nextCursor;
        if (shown.size && readTo < oldest) break;
        if (shown.size && [...shown].every((id) => seen.has(id))) break; // every shown photo judged
      }
    } catch (e) {
      this.showButton();
      return this.onAuthError(e) ? 'ended' : 'failed'; // ended: the page goes back to the login, no retry
    } finally {
      this.duringCatchUp = null;
    }
    // Deleted (or no longer shared) during the gap: within the range read, the feed has no longer got it.
    for (const id of [...shown, ...waiting]) {
      const entry = this.wall.images.get(id) ?? this.pending.get(id);
      if (!seen.has(id) && entry && (end || time(entry) > readTo)) this.removePhoto(id);
    }
    this.showButton();
    return 'done';
  }

  /** A shown photo's comments as the feed has them now, when they changed (added or deleted). */
  refreshComments(image) {
    const node = document.getElementById(`photo-${image.objectId}`);
    if (!node) return;
    const shownIds = new Set([...node.querySelectorAll('.comment-list li')].map((li) => li.dataset.objectId));
    if (node.dataset.captionComment) shownIds.add(node.dataset.captionComment);
    const latest = image.comments?.at(-1)?.objectId;
    if (image.commentCount === Number(node.dataset.commentCount || 0) && (!latest || shownIds.has(latest))) return;
    this.wall.images.set(image.objectId, image);
    this.wall.showComments(node, image, image.comments ?? [], image.commentCount ?? 0);
    // Live events that came while the feed was read may be newer than its answer: they stay as they were.
    const inFeed = new Set((image.comments ?? []).map((c) => c.objectId));
    const feedNewest = Math.max(0, ...(image.comments ?? []).map((c) => Date.parse(c.createdAt)));
    const list = node.querySelector('.comment-list');
    for (const c of this.duringCatchUp?.added.values() ?? []) {
      if (c.imageObjectId !== image.objectId || inFeed.has(c.objectId) || Date.parse(c.createdAt) <= feedNewest) continue;
      list.append(this.wall.comment(c));
      node.dataset.commentCount = String(Number(node.dataset.commentCount) + 1);
    }
    for (const id of this.duringCatchUp?.removed ?? []) {
      const li = list.querySelector(`li[data-object-id="${CSS.escape(id)}"]`);
      if (!li) continue;
      li.remove();
      node.dataset.commentCount = String(Number(node.dataset.commentCount) - 1);
    }
    this.wall.layout?.layoutAll();
  }
}
