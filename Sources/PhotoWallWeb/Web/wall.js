// The wall: pages of the feed function (newest first, keyset cursor), loaded as the sentinel
// scrolls into view or with the "Load more" button; comments; the full image in a dialog.

const PAGE_SIZE = Number(localStorage.getItem('photowall.pageSize')) || 12;
const $ = (id) => document.getElementById(id);
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function when(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : dateFormat.format(d);
}

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
    this.feed = $('feed');
    this.status = $('wall-status');
    this.more = $('load-more');
    this.more.addEventListener('click', () => this.loadMore());
    this.viewer = $('viewer');
    $('viewer-close').addEventListener('click', () => this.viewer.close());
    this.viewer.addEventListener('click', (e) => { if (e.target === this.viewer) this.viewer.close(); });
    this.viewer.addEventListener('close', () => this.returnFocus?.focus());
  }

  start() {
    this.loadMore();
    if ('IntersectionObserver' in window) {
      this.observer = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting)) this.loadMore();
      }, { rootMargin: '400px 0px' });
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
    this.status.textContent = 'Loading photos…';
    try {
      const body = { limit: PAGE_SIZE };
      if (this.cursor) body.cursor = this.cursor;
      const { result } = await this.api.call('POST', '/functions/feed', body);
      for (const image of result.images) this.add(image, false);
      this.cursor = result.nextCursor ?? null;
      this.done = !this.cursor;
      if (this.ids.size === 0) {
        this.status.textContent = 'The wall is empty: no photos from you or your friends yet. Share one above!';
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
    return r.top < window.innerHeight + 400;
  }

  /** Renders one feed entry; `first` puts it at the top (a photo just posted). */
  add(image, first) {
    if (this.ids.has(image.objectId)) return;
    this.ids.add(image.objectId);
    const node = $('photo-template').content.firstElementChild.cloneNode(true);
    node.dataset.objectId = image.objectId;
    node.id = `photo-${image.objectId}`;
    const who = image.user?.name ?? 'Someone';
    node.querySelector('.who').textContent = who;
    const time = node.querySelector('time');
    time.dateTime = image.createdAt;
    time.textContent = when(image.createdAt);
    const thumb = node.querySelector('.thumb');
    const img = thumb.querySelector('img');
    img.src = image.thumbnail?.url ?? image.display?.url ?? image.image?.url ?? '';
    // Cards are wider than the 256 px thumbnail on most screens: let the browser take the display
    // size where the thumbnail would be upscaled (wide cards, high-density phones).
    if (image.thumbnail?.url && image.display?.url) {
      img.srcset = `${image.thumbnail.url} 256w, ${image.display.url} 1080w`;
      img.sizes = '(max-width: 40rem) 100vw, 24rem';
    }
    img.alt = `Photo by ${who}, ${when(image.createdAt)}`;
    if (image.width && image.height) {
      img.width = image.width > image.height ? 256 : Math.round(256 * image.width / image.height);
      img.height = image.width > image.height ? Math.round(256 * image.height / image.width) : 256;
    }
    thumb.setAttribute('aria-label', `View the photo by ${who} full size`);
    thumb.addEventListener('click', () => this.open(image, who, thumb));

    const list = node.querySelector('.comment-list');
    for (const c of image.comments ?? []) list.append(this.comment(c));
    this.updateMore(node, image, image.commentCount ?? (image.comments ?? []).length);
    const form = node.querySelector('.comment-form');
    const input = form.querySelector('input');
    input.id = `comment-${image.objectId}`;
    form.querySelector('label').htmlFor = input.id;
    // A comment typed when the session ended comes back after the next login.
    const draftKey = `photowall.draft.${image.objectId}`;
    const draft = sessionStorage.getItem(draftKey);
    if (draft) { input.value = draft; sessionStorage.removeItem(draftKey); }
    form.addEventListener('submit', (e) => { e.preventDefault(); this.postComment(image, node); });
    if (first) this.feed.prepend(node); else this.feed.append(node);
    if (first) this.status.textContent = `${this.ids.size} photos shown.`;
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
    return li;
  }

  updateMore(node, image, count) {
    node.dataset.commentCount = String(count);
    const shown = node.querySelectorAll('.comment-list li').length;
    const btn = node.querySelector('.more-comments');
    btn.hidden = count <= shown;
    btn.textContent = `Show all ${count} comments`;
    btn.onclick = () => this.allComments(image, node);
  }

  async allComments(image, node) {
    const status = node.querySelector('.comment-status');
    status.textContent = 'Loading comments…';
    try {
      const { results } = await this.api.query('WallImageComment', {
        where: { imageObjectId: image.objectId }, order: 'createdAt', include: 'user', limit: '1000',
      });
      const list = node.querySelector('.comment-list');
      list.replaceChildren(...results.map((c) => this.comment(c)));
      this.updateMore(node, image, results.length);
      status.textContent = '';
    } catch (e) {
      if (!this.onAuthError(e)) status.textContent = `Comments could not be loaded: ${e.message}`;
    }
  }

  async postComment(image, node) {
    const form = node.querySelector('.comment-form');
    const input = form.querySelector('input');
    const status = node.querySelector('.comment-status');
    const text = input.value.trim();
    const setStatus = (message, error = false) => {
      status.textContent = message;
      status.classList.toggle('error', error);
    };
    if (!text) { setStatus('Write something first.', true); input.focus(); return; }
    const button = form.querySelector('button');
    button.disabled = true;
    setStatus('Posting…');
    try {
      const saved = await this.api.call('POST', '/classes/WallImageComment', { comment: text, imageObjectId: image.objectId });
      node.querySelector('.comment-list').append(this.comment({
        objectId: saved.objectId, comment: text, user: { name: this.session.name ?? this.session.username },
      }));
      this.updateMore(node, image, Number(node.dataset.commentCount) + 1);
      input.value = '';
      setStatus('Comment posted.');
      this.notify('', 'error', { onlyIfError: true }); // a success clears an earlier error banner
    } catch (e) {
      if (e.code === 209) sessionStorage.setItem(`photowall.draft.${image.objectId}`, text); // kept for after the login
      if (!this.onAuthError(e)) setStatus(`Your comment was not posted: ${e.message}`, true);
    } finally {
      button.disabled = false;
    }
  }

  /** The full photo (display size, or the original) in a modal dialog; Escape or Close returns focus. */
  open(image, who, from) {
    this.returnFocus = from;
    const img = $('viewer-img');
    img.src = image.display?.url ?? image.image?.url ?? image.thumbnail?.url;
    img.alt = `Photo by ${who}, ${when(image.createdAt)}`;
    $('viewer-caption').textContent = `${who} · ${when(image.createdAt)}`;
    $('viewer-original').href = image.image?.url ?? img.src;
    this.viewer.dataset.objectId = image.objectId;
    this.viewer.showModal();
  }
}
