// Upload: pick or drop photos, an optional comment, one progress bar per file driven by the tus
// client's byte counts; then the WallImage (and comment) objects, as `photowall upload` does. Files
// of unfinished uploads are kept in IndexedDB, so a reload resumes them without asking again.

import { TusUpload, pendingUploads, fingerprint, STORE_PREFIX } from './tus.js';
import { keepPendingFile, dropPendingFile, pendingFiles } from './pending.js';

const $ = (id) => document.getElementById(id);
const TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/heif', 'image/avif']);
/** Browsers that don't know HEIC/AVIF give such files an empty type; their name and bytes decide. */
const UNTYPED = /\.(heic|heif|hif|avif|webp)$/i;
const MiB = 1024 * 1024;

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
    this.chunkBytes = Number(localStorage.getItem('photowall.chunkBytes')) || 2 * MiB;
    $('upload-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.uploadAll([...this.input.files]);
    });
    const drop = $('drop');
    drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      this.uploadAll([...e.dataTransfer.files]);
    });
    this.resumeKept().then(() => this.showPending());
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
      + 'Choose the same file again to resume where it stopped.';
  }

  async uploadAll(files) {
    if (files.length === 0) { this.notify('Choose one or more photos first.'); this.input.focus(); return; }
    this.notify('');
    const comment = $('upload-comment').value.trim();
    $('upload-comment').value = '';
    this.input.value = '';
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

  async upload(file, li, comment) {
    const bar = li.querySelector('progress');
    const text = li.querySelector('.upload-status');
    const say = (message) => { $('upload-live').textContent = `${file.name}: ${message}`; };
    let quarter = 0;
    const fail = (message) => {
      li.classList.add('failed');
      text.textContent = `Failed: ${message}`;
      say(`failed: ${message}`);
      this.notify(`${file.name}: ${message}`);
      const dismiss = document.createElement('button');
      dismiss.type = 'button';
      dismiss.className = 'dismiss';
      dismiss.textContent = 'Dismiss';
      dismiss.setAttribute('aria-label', `Dismiss the failed upload of ${file.name}`);
      dismiss.addEventListener('click', () => {
        li.remove();
        if ($('notice').textContent.startsWith(`${file.name}: `)) this.notify('');
      });
      li.append(dismiss);
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
    const tus = new TusUpload(file, {
      type,
      endpoint: `${this.config.serverPath}/uploads`,
      headers: () => ({ 'X-Parse-Application-Id': this.config.appId, 'X-Parse-Session-Token': this.session.sessionToken }),
      userId: this.session.objectId,
      chunkBytes: this.chunkBytes,
      onProgress: (sent, total) => {
        const percent = total ? Math.floor((100 * sent) / total) : 100;
        bar.value = percent;
        bar.setAttribute('aria-valuetext', `${percent}%`);
        li.dataset.sent = String(sent);
        text.textContent = `${size(sent)} of ${size(total)} (${percent}%)`;
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
          text.textContent = `Connection trouble, retrying (${e.attempt})…`;
        }
      },
    });
    try {
      const done = await tus.start();
      bar.value = 100;
      text.textContent = 'Uploaded, posting…';
      const image = { __type: 'File', name: done.fileName };
      const created = await this.api.call('POST', '/classes/WallImage', { image });
      tus.forget();
      dropPendingFile(tus.key);
      li.dataset.objectId = created.objectId;
      let comments = [];
      if (comment) {
        const c = await this.api.call('POST', '/classes/WallImageComment', { comment, imageObjectId: created.objectId });
        comments = [{ objectId: c.objectId, comment, user: { name: this.session.name } }];
      }
      // Read it back for the thumbnail and display URLs (signed for the viewers allowed).
      const saved = await this.api.call('GET', `/classes/WallImage/${encodeURIComponent(created.objectId)}`);
      this.wall.add({
        objectId: created.objectId,
        createdAt: created.createdAt,
        user: { objectId: this.session.objectId, name: this.session.name ?? this.session.username },
        image: saved.image, thumbnail: saved.thumbnail, display: saved.display,
        width: saved.width, height: saved.height, commentCount: comments.length, comments,
      }, true);
      li.classList.add('done');
      text.textContent = 'Done: on the wall.';
      say('done, the photo is on the wall');
      this.notify('', 'error', { onlyIfError: true }); // a success clears an earlier error banner
    } catch (e) {
      // Refused for good (not a network or session problem): nothing to resume later.
      if (e.status >= 400 && e.status < 500 && e.status !== 401 && e.status !== 403 && e.status !== 423) {
        tus.forget();
        dropPendingFile(tus.key);
      }
      if (!this.onAuthError(e)) fail(e.message);
    }
  }
}
