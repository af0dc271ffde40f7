// The wall: pages of the feed function (newest first, keyset cursor), loaded as the sentinel scrolls
// into view or with the "Load more" button, laid out as a masonry; on each card the poster's caption,
// the two latest comments with "View all N", and a comment field opened on demand; the full photo in a
// viewer with previous/next (arrow keys) and Escape.

import { avatar, fullWhen, relativeWhen, setTime, timeElement } from './people.js';
import { Masonry } from './masonry.js';

const PAGE_SIZE = Number(localStorage.getItem('photowall.pageSize')) || 12;
/** Comments shown under a photo before "View all N comments". */
const SHOWN_COMMENTS = 2;
/** A comment by the poster this soon after the photo is its caption (the CLI's and the page's `--comment`). */
const CAPTION_WINDOW_MS = 5 * 60 * 1000;
/** How long "Comment posted." stays. */
const STATUS_MS = Number(localStorage.getItem('photowall.statusMs')) || 4000;
const $ = (id) => document.getElementById(id);

export class Wall {
  constructor(api, { session, onAuthError, notify }) {
    this.api = api;
    this.session = session;
    this.onAuthError = onAuthError;
    this.notify = notify;
    this.cursor = null;
    this.done = false;
    this.loading = false;
    this.ids = new Set();
    this.images = new Map(); // objectId → feed entry
    this.feed = $('feed');
    this.status = $('wall-status');
    this.more = $('load-more');
    this.more.addEventListener('click', () => this.loadMore());
    this.layout = 'ResizeObserver' in window ? new Masonry(this.feed) : null;
    this.viewer = $('viewer');
    $('viewer-close').addEventListener('click', () => this.viewer.close());
    $('viewer-prev').addEventListener('click', () => this.step(-1));
    $('viewer-next').addEventListener('click', () => this.step(1));
    this.viewer.addEventListener('click', (e) => { if (e.target === this.viewer) this.viewer.close(); });
    this.viewer.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
        e.preventDefault();
        this.step(e.key === 'ArrowLeft' ? -1 : 1);
      }
    });
    // Focus back on the card of the photo shown last (it may not be the one opened).
    this.viewer.addEventListener('close', () => {
      const thumb = document.querySelector(`#photo-${CSS.escape(this.viewer.dataset.objectId ?? '')} .thumb`);
      (thumb ?? this.returnFocus)?.focus();
    });
  }

  start() {
    this.loadMore();
    if ('IntersectionObserver' in window) {
      // An entry may be stale: the browser delivers it in a task of its own, after a page that came
      // meanwhile may have pushed the sentinel far down (its first entry is from the empty wall). So
      // the sentinel's place is asked again, or a second page would load with no one scrolling.
      this.observer = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting) && this.sentinelVisible()) this.loadMore();
      }, { rootMargin: '600px 0px' });
      this.observer.observe($('sentinel'));
    }
  }

  async loadMore() {
    if (this.loading || this.done) return;
    this.loading = true;
    this.feed.setAttribute('aria-busy', 'true');
    // Not `disabled`: that would drop the keyboard focus of someone who just pressed it.
    this.more.setAttribute('aria-disabled', 'true');
    this.more.textContent = 'Loading…';
    // Said only below photos already shown: above an empty wall, the first page would push it down.
    this.status.textContent = this.ids.size ? 'Loading photos…' : '';
    try {
      const body = { limit: PAGE_SIZE };
      if (this.cursor) body.cursor = this.cursor;
      const { result } = await this.api.call('POST', '/functions/feed', body);
      const added = result.images.map((image) => this.card(image)).filter(Boolean);
      this.feed.append(...added);
      this.layout?.append(added);
      this.cursor = result.nextCursor ?? null;
      this.done = !this.cursor;
      if (this.ids.size === 0) {
        this.status.textContent = 'The wall is empty: no photos from you or your friends yet. Share one with the button at the top!';
      } else {
        this.status.textContent = this.done ? `That's all: ${this.ids.size} photos.` : `${this.ids.size} photos shown.`;
      }
    } catch (e) {
      if (!this.onAuthError(e)) {
        this.status.textContent = `The wall could not be loaded: ${e.message}${e.code ? ` (code ${e.code})` : ''}`;
        this.notify(this.status.textContent);
      }
    } finally {
      this.loading = false;
      this.feed.setAttribute('aria-busy', 'false');
      const hadFocus = document.activeElement === this.more;
      this.more.removeAttribute('aria-disabled');
      this.more.textContent = 'Load more';
      this.more.hidden = this.done;
      if (hadFocus && this.done) this.status.focus(); // keep the keyboard user's place: "That's all…"
    }
    // The sentinel may still be in view (tall screen, short page): keep filling.
    if (!this.done && this.observer && this.sentinelVisible()) requestAnimationFrame(() => this.loadMore());
  }

  sentinelVisible() {
    const r = $('sentinel').getBoundingClientRect();
    return r.top < window.innerHeight + 600;
  }

  /** Puts a photo just posted first on the wall. */
  add(image) {
    const node = this.card(image);
    if (!node) return;
    this.feed.prepend(node);
    this.layout?.layoutAll();
    this.status.textContent = `${this.ids.size} photos shown.`;
  }

  /** One feed entry's card (null when it is on the wall already). */
  card(image) {
    if (this.ids.has(image.objectId)) return null;
    this.ids.add(image.objectId);
    this.images.set(image.objectId, image);
    const node = $('photo-template').content.firstElementChild.cloneNode(true);
    node.dataset.objectId = image.objectId;
    node.id = `photo-${image.objectId}`;
    const who = image.user?.name ?? 'Someone';
    node.querySelector('.photo-head').prepend(avatar(image.user));
    node.querySelector('.who').textContent = who;
    setTime(node.querySelector('time'), image.createdAt);
    const thumb = node.querySelector('.thumb');
    const img = thumb.querySelector('img');
    // The photo's own shape, known before it loads: the browser reserves its height (no layout shift).
    if (image.width && image.height) { img.width = image.width; img.height = image.height; }
    img.src = image.thumbnail?.url ?? image.display?.url ?? image.image?.url ?? '';
    // Columns are wider than the 256 px thumbnail on most screens: let the browser take the display
    // size where the thumbnail would be upscaled (wide columns, high-density phones).
    if (image.thumbnail?.url && image.display?.url) {
      img.srcset = `${image.thumbnail.url} 256w, ${image.display.url} 1080w`;
      img.sizes = '(max-width: 40rem) 100vw, 20rem';
    }
    img.alt = `Photo by ${who}, ${fullWhen(image.createdAt)}`;
    thumb.setAttribute('aria-label', `View the photo by ${who} full size`);
    thumb.addEventListener('click', () => this.open(image.objectId, thumb));

    const form = node.querySelector('.comment-form');
    const input = form.querySelector('input');
    input.id = `comment-${image.objectId}`;
    form.querySelector('label').htmlFor = input.id;
    const opener = node.querySelector('.comment-open');
    opener.setAttribute('aria-label', `Add a comment to the photo by ${who}`);
    opener.addEventListener('click', () => this.openComment(node));
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !input.value) { e.preventDefault(); this.closeComment(node); }
    });
    // A comment typed when the session ended comes back after the next login.
    const draftKey = `photowall.draft.${image.objectId}`;
    const draft = sessionStorage.getItem(draftKey);
    if (draft) { input.value = draft; sessionStorage.removeItem(draftKey); form.hidden = false; opener.hidden = true; }
    form.addEventListener('submit', (e) => { e.preventDefault(); this.postComment(image, node); });

    const comments = image.comments ?? [];
    this.showComments(node, image, comments, image.commentCount ?? comments.length);
    return node;
  }

  /** The poster's caption: the photo's `caption`, else their own first comment made with the upload
   *  (known when `comments` holds the oldest one, i.e. all of them). → {text, commentId?} or null. */
  caption(image, comments, complete) {
    if (typeof image.caption === 'string' && image.caption.trim()) return { text: image.caption };
    const first = comments[0];
    if (!complete || !first || !image.user?.objectId || first.user?.objectId !== image.user.objectId) return null;
    const gap = new Date(first.createdAt).getTime() - new Date(image.createdAt).getTime();
    return gap >= 0 && gap <= CAPTION_WINDOW_MS ? { text: first.comment ?? '', commentId: first.objectId } : null;
  }

  /** Caption, the latest comments (all of them when `all`), and "View all N comments". */
  showComments(node, image, comments, count, all = false) {
    const caption = this.caption(image, comments, comments.length >= count);
    const p = node.querySelector('.caption');
    if (caption) {
      p.hidden = false;
      p.querySelector('.caption-who').textContent = image.user?.name ?? 'Someone';
      p.querySelector('.caption-text').textContent = caption.text;
      node.dataset.captionComment = caption.commentId ?? '';
    } else if (!node.dataset.captionComment) {
      p.hidden = true;
    }
    const others = comments.filter((c) => !c.objectId || c.objectId !== node.dataset.captionComment);
    const total = count - (node.dataset.captionComment ? 1 : 0);
    const shown = all ? others : others.slice(-SHOWN_COMMENTS);
    node.querySelector('.comment-list').replaceChildren(...shown.map((c) => this.comment(c)));
    node.dataset.commentCount = String(count);
    const btn = node.querySelector('.more-comments');
    btn.hidden = total <= shown.length;
    btn.textContent = `View all ${total} comments`;
    btn.onclick = () => this.allComments(image, node);
  }

  comment(c) {
    const li = document.createElement('li');
    li.dataset.objectId = c.objectId ?? '';
    const b = document.createElement('strong');
    b.textContent = c.user?.name ?? 'Someone';
    const text = document.createElement('span');
    text.className = 'comment-text';
    text.textContent = c.comment ?? '';
    li.append(b, ' ', text);
    if (c.createdAt) li.append(timeElement(c.createdAt));
    return li;
  }

  openComment(node) {
    node.querySelector('.comment-open').hidden = true;
    const form = node.querySelector('.comment-form');
    form.hidden = false;
    form.querySelector('input').focus();
  }

  closeComment(node) {
    node.querySelector('.comment-form').hidden = true;
    const opener = node.querySelector('.comment-open');
    opener.hidden = false;
    opener.focus();
  }

  async allComments(image, node) {
    this.setStatus(node, 'Loading comments…');
    try {
      const { results } = await this.api.query('WallImageComment', {
        where: { imageObjectId: image.objectId }, order: 'createdAt', include: 'user', limit: '1000',
      });
      const comments = results.map((c) => ({ ...c, user: c.user ? { objectId: c.user.objectId, name: c.user.name ?? c.user.username } : null }));
      const hadFocus = document.activeElement === node.querySelector('.more-comments');
      this.showComments(node, image, comments, results.length, true);
      this.setStatus(node, '');
      // The button is gone: keep a keyboard user's place on the first comment.
      const first = node.querySelector('.comment-list li');
      if (hadFocus && first) { first.tabIndex = -1; first.focus(); }
    } catch (e) {
      if (!this.onAuthError(e)) this.setStatus(node, `Comments could not be loaded: ${e.message}`, 'error');
    }
  }

  /** The card's status line; a success ('ok') goes away after a few seconds, so the card gets its height back. */
  setStatus(node, message, kind = '') {
    const status = node.querySelector('.comment-status');
    clearTimeout(Number(status.dataset.timer));
    status.textContent = message;
    status.className = `comment-status status ${kind}`.trim();
    if (kind === 'ok') status.dataset.timer = String(setTimeout(() => { status.textContent = ''; }, STATUS_MS));
  }

  async postComment(image, node) {
    const form = node.querySelector('.comment-form');
    const input = form.querySelector('input');
    const text = input.value.trim();
    if (!text) { this.setStatus(node, 'Write something first.', 'error'); input.focus(); return; }
    const button = form.querySelector('button');
    button.disabled = true;
    this.setStatus(node, 'Posting…');
    try {
      const saved = await this.api.call('POST', '/classes/WallImageComment', { comment: text, imageObjectId: image.objectId });
      node.querySelector('.comment-list').append(this.comment({
        objectId: saved.objectId, comment: text, createdAt: saved.createdAt,
        user: { objectId: this.session.objectId, name: this.session.name ?? this.session.username },
      }));
      const count = Number(node.dataset.commentCount) + 1;
      node.dataset.commentCount = String(count);
      const btn = node.querySelector('.more-comments');
      const total = count - (node.dataset.captionComment ? 1 : 0);
      btn.textContent = `View all ${total} comments`;
      input.value = '';
      this.setStatus(node, 'Comment posted.', 'ok');
      this.notify('', 'error', { onlyIfError: true }); // a success clears an earlier error banner
    } catch (e) {
      if (e.code === 209) sessionStorage.setItem(`photowall.draft.${image.objectId}`, text); // kept for after the login
      if (!this.onAuthError(e)) this.setStatus(node, `Your comment was not posted: ${e.message}`, 'error');
    } finally {
      button.disabled = false;
    }
  }

  /** The full photo (display size) in a modal dialog; ←/→ and the buttons step through the wall,
   *  Escape or Close returns focus to the card. */
  open(objectId, from) {
    this.returnFocus = from;
    this.show(objectId);
    if (!this.viewer.open) this.viewer.showModal();
  }

  show(objectId) {
    const image = this.images.get(objectId);
    if (!image) return;
    const who = image.user?.name ?? 'Someone';
    const img = $('viewer-img');
    if (image.width && image.height) { img.width = image.width; img.height = image.height; }
    img.src = image.display?.url ?? image.image?.url ?? image.thumbnail?.url;
    img.alt = `Photo by ${who}, ${fullWhen(image.createdAt)}`;
    const caption = this.feed.querySelector(`#photo-${CSS.escape(objectId)} .caption:not([hidden]) .caption-text`)?.textContent;
    $('viewer-caption').textContent = `${who} · ${relativeWhen(image.createdAt)}${caption ? ` · ${caption}` : ''}`;
    $('viewer-original').href = image.image?.url ?? img.src;
    this.viewer.dataset.objectId = objectId;
    const order = this.order();
    const at = order.indexOf(objectId);
    $('viewer-position').textContent = `${at + 1} of ${order.length}${this.done ? '' : '+'}`;
    $('viewer-prev').disabled = at <= 0;
    $('viewer-next').disabled = at >= order.length - 1 && this.done;
  }

  order() { return [...this.feed.children].map((n) => n.dataset.objectId); }

  /** Previous (-1) or next (+1) photo in wall order; past the last one, the next page is loaded first. */
  async step(delta) {
    let order = this.order();
    let at = order.indexOf(this.viewer.dataset.objectId) + delta;
    if (at >= order.length && !this.done) {
      await this.loadMore();
      order = this.order();
    }
    at = Math.max(0, Math.min(order.length - 1, at));
    this.show(order[at]);
    // Keep the focus inside on a button that still works.
    if (document.activeElement?.disabled) $('viewer-close').focus();
  }
}
