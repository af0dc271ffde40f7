// Upload: the "Share photos" panel (a styled picker or a drop anywhere on the page, an optional caption),
// one row per file driven by the tus client's byte counts (speed, time left, Cancel), then the WallImage
// (and caption comment) objects, as `photowall upload --comment` does. Files of unfinished uploads are kept
// in IndexedDB, so a reload resumes them without asking again; a server that stays away is tried again
// by itself, with every retry shown.

import { TusUpload, pendingUploads, fingerprint, STORE_PREFIX } from './tus.js';
import { keepPendingFile, dropPendingFile, pendingFiles } from './pending.js';

const $ = (id) => document.getElementById(id);
const TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/heif', 'image/avif']);
/** Browsers that don't know HEIC/AVIF give such files an empty type; their name and bytes decide. */
const UNTYPED = /\.(heic|heif|hif|avif|webp)$/i;
const MiB = 1024 * 1024;
const setting = (name, fallback) => { const v = Number(localStorage.getItem(`photowall.${name}`)); return Number.isFinite(v) && v > 0 ? v : fallback; };
/** After the retries of one attempt are used up, the next attempt starts this much later (or when the browser comes online). */
const RESUME_MS = setting('resumeMs', 30_000);
/** Finished and cancelled rows fade out after this long (not while pointed at or focused). */
const DONE_ROW_MS = setting('doneRowMs', 8_000);

/** The photo type the file's first bytes say (as the server's Sniff.swift): JPEG (FF D8 FF),
 *  PNG (89 'PNG' 0D 0A 1A 0A), WebP ('RIFF' size 'WEBP'), or an ISO-BMFF 'ftyp' box whose brands
 *  name AVIF (avif/avis), HEIC (heic/heix/hevc/hevx/heim/heis/hevm/hevs) or HEIF (mif1/msf1);
 *  null otherwise, so a renamed text file is refused before any byte is sent. */
async function photoType(file) {
  const b = new Uint8Array(await file.slice(0, 256).arrayBuffer());
  const ascii = (from, to) => String.fromCharCode(...b.slice(from, to));
  if (b[0] === 0xFF && b[1] === 0xD8 && b[2] === 0xFF) return 'image/jpeg';
  if ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A].every((v, i) => b[i] === v)) return 'image/png';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (b.length < 16 || ascii(4, 8) !== 'ftyp') return null;
  const boxSize = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
  const end = Math.min(Math.max(boxSize, 16), b.length);
  const brands = [ascii(8, 12)];
  for (let at = 16; at + 4 <= end; at += 4) brands.push(ascii(at, at + 4));
  if (brands.some((x) => x === 'avif' || x === 'avis')) return 'image/avif';
  if (brands.some((x) => ['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'hevm', 'hevs'].includes(x))) return 'image/heic';
  if (brands.some((x) => x === 'mif1' || x === 'msf1')) return 'image/heif';
  return null;
}

function size(bytes) {
  return bytes >= MiB ? `${(bytes / MiB).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} kB`;
}

/** "8 s", "1 min 05 s", "1 h 02 min". */
export function duration(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** Bytes per second over the last few seconds of progress reports. */
class Rate {
  constructor(windowMs = 5000) { this.windowMs = windowMs; this.samples = []; }
  add(sent, now = performance.now()) {
    this.samples.push([now, sent]);
    while (this.samples.length > 2 && now - this.samples[0][0] > this.windowMs) this.samples.shift();
  }
  reset() { this.samples = []; }
  perSecond() {
    if (this.samples.length < 2) return 0;
    const [t0, s0] = this.samples[0];
    const [t1, s1] = this.samples[this.samples.length - 1];
    return t1 - t0 < 500 ? 0 : ((s1 - s0) * 1000) / (t1 - t0);
  }
}

export class Uploader {
  constructor(api, config, { session, wall, onAuthError, notify }) {
    this.api = api;
    this.config = config;
    this.session = session;
    this.wall = wall;
    this.onAuthError = onAuthError;
    this.notify = notify;
    this.input = $('files');
    this.list = $('uploads');
    this.sheet = $('share');
    this.chunkBytes = setting('chunkBytes', 2 * MiB);
    this.maxRetries = setting('maxRetries', 8);
    this.retryBaseMs = setting('retryBaseMs', 500);
    $('share-open').addEventListener('click', () => this.openSheet());
    $('share-close').addEventListener('click', () => this.sheet.close());
    this.input.addEventListener('change', () => this.showChosen());
    $('upload-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.submit();
    });
    this.acceptDrops();
    this.resumeKept().then(() => this.showPending());
  }

  openSheet() {
    $('share-error').hidden = true;
    this.sheet.showModal();
    this.input.focus();
  }

  resetForm() {
    this.input.value = '';
    $('upload-comment').value = '';
    $('share-error').hidden = true;
    this.showChosen();
  }

  showChosen() {
    const files = [...this.input.files];
    const chosen = $('chosen');
    chosen.classList.toggle('some', files.length > 0);
    chosen.textContent = files.length === 0 ? 'No photos chosen yet.'
      : `${files.length} photo${files.length > 1 ? 's' : ''} chosen: ${files.map((f) => f.name).join(', ')}`;
    if (files.length) $('share-error').hidden = true;
  }

  submit() {
    const files = [...this.input.files];
    if (files.length === 0) {
      const error = $('share-error');
      error.textContent = 'Choose one or more photos first.';
      error.hidden = false;
      this.notify('Choose one or more photos first.');
      this.input.focus();
      return;
    }
    const comment = $('upload-comment').value.trim();
    this.resetForm();
    this.sheet.close();
    this.uploadAll(files, comment);
  }

  /** Files dropped anywhere on the page (the panel's drop zone too) are shared at once, with the caption typed. */
  acceptDrops() {
    const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
    let depth = 0;
    document.addEventListener('dragenter', (e) => { if (hasFiles(e)) { depth++; document.body.classList.add('dragging'); } });
    document.addEventListener('dragleave', () => { if (--depth <= 0) { depth = 0; document.body.classList.remove('dragging'); } });
    document.addEventListener('dragover', (e) => { if (hasFiles(e)) e.preventDefault(); });
    document.addEventListener('drop', (e) => {
      depth = 0;
      document.body.classList.remove('dragging');
      if (!e.dataTransfer?.files?.length || $('upload').hidden) return;
      e.preventDefault();
      const comment = this.sheet.open ? $('upload-comment').value.trim() : '';
      if (this.sheet.open) { this.resetForm(); this.sheet.close(); }
      this.uploadAll([...e.dataTransfer.files], comment);
    });
  }

  /** Resumes by itself every upload a reload interrupted whose file the browser kept. */
  async resumeKept() {
    const remembered = new Set(pendingUploads(this.session.objectId).map((p) => p.key));
    const kept = await pendingFiles(`${STORE_PREFIX}${this.session.objectId}:`);
    const jobs = [];
    for (const k of kept) {
      if (!remembered.has(k.key)) { dropPendingFile(k.key); continue; } // finished or abandoned
      jobs.push(this.upload(k.file, this.row(k.file), k.comment ?? ''));
    }
    const message = `Resuming ${jobs.length} unfinished upload${jobs.length > 1 ? 's' : ''}.`;
    if (jobs.length) this.notify(message, 'info');
    this.resuming = Promise.all(jobs).then(() => {
      if ($('notice').textContent === message) this.notify('');
      this.showPending();
    });
  }

  /** Tells about interrupted uploads whose file is not at hand: choosing the same file again resumes them. */
  showPending() {
    const busy = new Set([...this.list.querySelectorAll('li:not(.done):not(.failed)')].map((li) => li.dataset.key));
    const pending = pendingUploads(this.session.objectId).filter((p) => !busy.has(p.key));
    const hint = $('resume-hint');
    hint.hidden = pending.length === 0;
    hint.textContent = pending.length === 0 ? '' : `Unfinished: ${pending.map((p) => `${p.name} (${Math.floor(100 * p.offset / p.size)}%)`).join(', ')}. `
      + 'Share the same file again to resume where it stopped.';
  }

  async uploadAll(files, comment = '') {
    if (files.length === 0) { this.notify('Choose one or more photos first.'); return; }
    this.notify('');
    // Two at a time: enough to fill the line without starving the wall's requests.
    const queue = files.map((f) => ({ file: f, row: this.row(f) }));
    const worker = async () => { for (let job; (job = queue.shift());) await this.upload(job.file, job.row, comment); };
    await Promise.all([worker(), worker()]);
    this.showPending();
  }

  row(file) {
    const li = document.createElement('li');
    li.className = 'upload-item';
    li.dataset.name = file.name;
    li.dataset.key = fingerprint(file, this.session.objectId);
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = file.name;
    name.title = file.name;
    const bar = document.createElement('progress');
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute('aria-label', `Upload of ${file.name}`);
    const text = document.createElement('span');
    text.className = 'upload-status';
    text.textContent = 'Waiting…';
    li.append(name, bar, text);
    this.list.prepend(li);
    return li;
  }

  /** The row's one button: Cancel while it runs, Dismiss once it is over. */
  action(li, kind, onClick) {
    li.querySelector('.row-action')?.remove();
    if (!kind) return;
    const b = document.createElement('button');
    b.type = 'button';
    b.className = `row-action ${kind}`;
    b.textContent = kind === 'cancel' ? 'Cancel' : 'Dismiss';
    b.setAttribute('aria-label', `${b.textContent} the upload of ${li.dataset.name}`);
    b.addEventListener('click', onClick);
    li.querySelector('.name').after(b);
  }

  /** Removes the row; the focus goes to the next row's button, or the share button. */
  dismiss(li) {
    const had = li.contains(document.activeElement);
    const next = li.nextElementSibling ?? li.previousElementSibling;
    clearTimeout(Number(li.dataset.fadeTimer));
    li.remove();
    if ($('notice').textContent.startsWith(`${li.dataset.name}: `)) this.notify('');
    if (had) (next?.querySelector('.row-action') ?? $('share-open')).focus();
  }

  /** Finished rows fade out by themselves, unless pointed at or focused then. */
  fadeLater(li) {
    const fade = () => {
      if (!li.isConnected) return;
      if (li.matches(':hover, :focus-within')) { li.dataset.fadeTimer = String(setTimeout(fade, 2000)); return; }
      li.classList.add('fading');
      li.dataset.fadeTimer = String(setTimeout(() => { if (li.isConnected) li.remove(); }, 450));
    };
    li.dataset.fadeTimer = String(setTimeout(fade, DONE_ROW_MS));
  }

  async upload(file, li, comment) {
    const bar = li.querySelector('progress');
    const text = li.querySelector('.upload-status');
    const say = (message) => { $('upload-live').textContent = `${file.name}: ${message}`; };
    let quarter = 0;
    const fail = (message) => {
      li.classList.remove('waiting');
      li.classList.add('failed');
      text.textContent = `Failed: ${message}`;
      say(`failed: ${message}`);
      this.notify(`${file.name}: ${message}`);
      this.action(li, 'dismiss', () => this.dismiss(li));
    };
    if (!TYPES.has(file.type) && !(file.type === '' && UNTYPED.test(file.name))) {
      fail('only JPEG, PNG, WebP, HEIC and AVIF photos can be shared.'); return;
    }
    if (file.size === 0) { fail('the file is empty.'); return; }
    const type = await photoType(file);
    if (!type) { fail('this file is not a JPEG, PNG, WebP, HEIC or AVIF photo (its contents say otherwise).'); return; }
    if (this.config.maxUploadBytes && file.size > this.config.maxUploadBytes) {
      fail(`the file is larger than the server accepts (${size(this.config.maxUploadBytes)}).`); return;
    }
    await keepPendingFile(fingerprint(file, this.session.objectId), file, comment);

    // A countdown in the row ("… trying again in 8 s"), one per row at a time.
    let countdown = null;
    const stopCountdown = () => { clearInterval(countdown); countdown = null; };
    const countDown = (ms, message) => {
      stopCountdown();
      const until = performance.now() + ms;
      const show = () => {
        const left = (until - performance.now()) / 1000;
        text.textContent = left > 0.05 ? message(duration(left)) : 'Trying again…';
        if (left <= 0.05) stopCountdown();
      };
      show();
      countdown = setInterval(show, 250);
    };
    const unreachable = (e) => e.status === 0 || e.code === 100 || [408, 423, 429, 500, 502, 503, 504].includes(e.status);
    const trouble = (e) => (e.status === 0 || e.code === 100 ? "Can't reach the server"
      : e.code === 124 ? 'The server is busy making thumbnails' : `The server is busy (${e.status})`);

    const rate = new Rate();
    const tus = new TusUpload(file, {
      type,
      endpoint: `${this.config.serverPath}/uploads`,
      headers: () => ({ 'X-Parse-Application-Id': this.config.appId, 'X-Parse-Session-Token': this.session.sessionToken }),
      userId: this.session.objectId,
      chunkBytes: this.chunkBytes,
      maxRetries: this.maxRetries,
      retryBaseMs: this.retryBaseMs,
      onProgress: (sent, total) => {
        stopCountdown();
        li.classList.remove('waiting');
        rate.add(sent);
        const percent = total ? Math.floor((100 * sent) / total) : 100;
        bar.value = percent;
        bar.setAttribute('aria-valuetext', `${percent}%`);
        li.dataset.sent = String(sent);
        const speed = rate.perSecond();
        const parts = [`${size(sent)} of ${size(total)} (${percent}%)`];
        if (speed > 0 && sent < total) parts.push(`${size(speed)}/s`, `${duration((total - sent) / speed)} left`);
        text.textContent = parts.join(' · ');
        if (Math.floor(percent / 25) > quarter) { quarter = Math.floor(percent / 25); say(`${percent}% uploaded`); }
      },
      onEvent: (e) => {
        if (e.type === 'resumed') {
          say(`resuming at ${Math.floor((100 * e.offset) / file.size)}%`);
          li.dataset.resumedFrom = String(e.offset);
          li.dataset.uploadUrl = e.url;
        } else if (e.type === 'created') {
          say('upload started');
          li.dataset.uploadUrl = e.url;
        } else if (e.type === 'patch' && li.dataset.firstPatchOffset === undefined) {
          li.dataset.firstPatchOffset = String(e.offset);
        } else if (e.type === 'retry') {
          li.dataset.retries = String(Number(li.dataset.retries ?? 0) + 1);
          li.dataset.retryPhase = e.phase;
          li.classList.add('waiting');
          rate.reset();
          const what = trouble(e);
          countDown(e.delay, (left) => `${what}, trying again in ${left}`);
          if (e.attempt === 1) say(`${what.toLowerCase()}, trying again`);
        } else if (e.type === 'offline') {
          stopCountdown();
          text.textContent = "You're offline: the upload goes on when the connection is back.";
          say('offline, waiting for the connection');
        }
      },
    });

    let cancelled = false;
    let wake = null; // ends the wait between attempts (Cancel, back online)
    this.action(li, 'cancel', async () => {
      cancelled = true;
      stopCountdown();
      wake?.();
      text.textContent = 'Cancelling…';
      await tus.terminate();
      dropPendingFile(tus.key);
    });
    const markCancelled = () => {
      li.classList.remove('waiting');
      li.classList.add('cancelled');
      bar.value = 0;
      bar.removeAttribute('aria-valuetext');
      text.textContent = 'Cancelled.';
      say('cancelled');
      this.action(li, 'dismiss', () => this.dismiss(li));
      this.fadeLater(li);
    };
    const posted = { imageId: null, comment: null };
    for (;;) {
      try {
        const done = await tus.start();
        if (cancelled) throw Object.assign(new Error('Upload cancelled.'), { cancelled: true });
        this.action(li, null); // too late to cancel: the photo is being posted
        stopCountdown();
        li.classList.remove('waiting');
        bar.value = 100;
        text.textContent = 'Uploaded, posting…';
        if (!posted.imageId) {
          const created = await this.api.call('POST', '/classes/WallImage', { image: { __type: 'File', name: done.fileName } });
          posted.imageId = created.objectId;
          posted.createdAt = created.createdAt;
          tus.forget();
          dropPendingFile(tus.key);
        }
        li.dataset.objectId = posted.imageId;
        if (comment && !posted.comment) {
          const c = await this.api.call('POST', '/classes/WallImageComment', { comment, imageObjectId: posted.imageId });
          posted.comment = { objectId: c.objectId, comment, createdAt: c.createdAt, user: { objectId: this.session.objectId, name: this.session.name } };
        }
        // Read it back for the thumbnail and display URLs (signed for the viewers allowed).
        const saved = await this.api.call('GET', `/classes/WallImage/${encodeURIComponent(posted.imageId)}`);
        this.wall.add({
          objectId: posted.imageId,
          createdAt: posted.createdAt,
          user: { objectId: this.session.objectId, name: this.session.name ?? this.session.username },
          image: saved.image, thumbnail: saved.thumbnail, display: saved.display,
          width: saved.width, height: saved.height, commentCount: posted.comment ? 1 : 0, comments: posted.comment ? [posted.comment] : [],
        });
        li.classList.add('done');
        text.textContent = 'Done: on the wall.';
        say('done, the photo is on the wall');
        this.action(li, 'dismiss', () => this.dismiss(li));
        this.fadeLater(li);
        this.notify('', 'error', { onlyIfError: true }); // a success clears an earlier error banner
        return;
      } catch (e) {
        stopCountdown();
        if (e.cancelled || cancelled) { markCancelled(); return; }
        if (this.onAuthError(e)) return;
        if (!unreachable(e)) {
          // Refused for good (not a network or session problem): nothing to resume later.
          if (e.status >= 400 && e.status < 500 && e.status !== 401 && e.status !== 403) {
            tus.forget();
            dropPendingFile(tus.key);
          }
          fail(e.message);
          return;
        }
        // The retries are used up: the upload stays (file in IndexedDB, URL in localStorage) and starts
        // again by itself later, or as soon as the browser is back online, or after a reload.
        li.classList.add('waiting');
        li.dataset.gaveUp = String(Number(li.dataset.gaveUp ?? 0) + 1);
        const what = trouble(e);
        // Sooner when the server says when (a save whose thumbnails could not start in time: 124, 503).
        const waitMs = Math.min(RESUME_MS, e.retryAfterMs ?? RESUME_MS);
        say(`${what.toLowerCase()}; the upload resumes by itself when it is back`);
        countDown(waitMs, (left) => `${what}. The upload resumes by itself when it's back: next try in ${left}.`);
        await new Promise((resolve) => {
          const timer = setTimeout(done, waitMs);
          function done() { clearTimeout(timer); window.removeEventListener('online', done); wake = null; resolve(); }
          window.addEventListener('online', done);
          wake = done;
        });
        stopCountdown();
        if (cancelled) { markCancelled(); return; }
        text.textContent = 'Trying again…';
      }
    }
  }
}
