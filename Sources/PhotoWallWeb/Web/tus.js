// A small tus 1.0.0 client (creation, HEAD to resume, PATCH in chunks, termination, sha256 checksums when the
// page is a secure context). Every request retries network failures and busy answers with backoff, and tells
// about each retry before waiting (the page shows a countdown). The upload URL is kept in localStorage under
// the file's fingerprint (name, size, lastModified), so choosing the same file again after a reload or a
// dropped network resumes from the offset the server reports instead of sending everything again (upload.js
// keeps the file itself in IndexedDB, so after a reload that happens without choosing it again).

import { ApiError } from './api.js';

export const STORE_PREFIX = 'photowall.tus:';
const RETRYABLE = new Set([0, 408, 423, 429, 500, 502, 503, 504]);

/** The localStorage key of a file's upload for one user. */
export function fingerprint(file, userId) {
  return `${STORE_PREFIX}${userId}:${file.name}:${file.size}:${file.lastModified}`;
}

/** Unfinished uploads remembered for a user: [{key, name, size, url, offset}] (offset as last seen). */
export function pendingUploads(userId) {
  const out = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (!key.startsWith(`${STORE_PREFIX}${userId}:`)) continue;
    try { out.push({ ...JSON.parse(localStorage.getItem(key)), key }); } catch { localStorage.removeItem(key); }
  }
  return out;
}

function base64(text) {
  const bytes = new TextEncoder().encode(text);
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

export class TusUpload {
  /**
   * @param file a File
   * @param opts {endpoint, headers(): object, userId, chunkBytes, maxRetries, retryBaseMs, onProgress(sent, total), onEvent({type,…})}
   */
  constructor(file, opts) {
    this.file = file;
    this.type = opts.type || file.type || 'application/octet-stream'; // sent as the upload's filetype
    this.endpoint = opts.endpoint;
    this.headers = opts.headers;
    this.key = fingerprint(file, opts.userId);
    this.chunkBytes = opts.chunkBytes ?? 2 * 1024 * 1024;
    this.onProgress = opts.onProgress ?? (() => {});
    this.onEvent = opts.onEvent ?? (() => {});
    this.maxRetries = opts.maxRetries ?? 8;
    this.retryBaseMs = opts.retryBaseMs ?? 500;
    this.sent = 0; // never goes backwards in what onProgress reports
    this.xhr = null;
    this.aborted = false;
  }

  /** Uploads (or resumes) the file. Resolves to {fileName, fileURL}; throws ApiError (`cancelled` set after
   *  `abort()`; a network or busy-server error once `maxRetries` retries of one step are used up). Every retry,
   *  of every step (the resume HEAD, the create POST, each PATCH), is told first as
   *  `onEvent({type: 'retry', phase, attempt, delay, status, reason})`, and a wait for the browser to be
   *  back online as `{type: 'offline'}`. */
  async start() {
    if (this.terminating) this.check();
    this.aborted = false;
    this.controller = new AbortController();
    const size = this.file.size;
    let url = null;
    let offset = 0;
    let done = null;
    const saved = this.saved();
    if (saved?.url) {
      try {
        const state = await this.withRetry('resume', () => this.head(saved.url));
        url = saved.url;
        offset = state.offset;
        done = state.done;
        this.onEvent({ type: 'resumed', offset, url });
      } catch (e) {
        if (this.aborted || RETRYABLE.has(e.status)) throw e; // cancelled, or unreachable: keep the URL for later
        this.forget(); // gone, expired or someone else's: start again
        this.onEvent({ type: 'restarted', reason: e.message });
      }
    }
    if (!url) {
      url = await this.withRetry('create', () => this.create());
      this.remember(url, 0);
      this.onEvent({ type: 'created', url });
    }
    this.url = url;
    if (this.terminating) { this.forget(); await this.remove(url); } // cancelled while it was being created
    this.check();
    this.report(offset);
    let attempt = 0;
    while (!done && offset < size) {
      this.check();
      try {
        const r = await this.patch(url, offset);
        offset = r.offset;
        done = r.done;
        attempt = 0;
        this.remember(url, offset);
      } catch (e) {
        this.check();
        if (e.status === 409 && e.offset !== undefined) { offset = e.offset; continue; }
        if (!RETRYABLE.has(e.status) || attempt >= this.maxRetries) throw e;
        attempt += 1;
        await this.backOff('patch', attempt, e);
        try {
          const state = await this.head(url);
          offset = state.offset;
          done = state.done;
        } catch { /* the next PATCH will tell */ }
      }
    }
    if (!done) done = (await this.withRetry('finish', () => this.head(url))).done;
    if (!done) throw new ApiError(130, 'The server did not finish the upload.');
    this.report(size);
    return done;
  }

  /** Stops at once (the transfer in flight, or the wait before a retry); start() then throws a `cancelled`
   *  error. The server keeps what it has, so a later start() resumes, unless `terminate()` follows. */
  abort() {
    this.aborted = true;
    this.xhr?.abort();
    this.controller?.abort();
  }

  /** Cancels for good: stops, asks the server to delete the upload (tus termination: DELETE with
   *  `Tus-Resumable`; a failure is ignored, the server's expiry sweep removes it), and forgets its URL. */
  async terminate() {
    this.terminating = true;
    this.abort();
    const url = this.url ?? this.saved()?.url;
    this.forget();
    if (url) await this.remove(url);
  }

  /** DELETE, asked again while the server still holds the upload for the PATCH just cut (423 Locked, until it
   *  sees the connection closed); given up after a few seconds or when unreachable (the server's expiry sweep
   *  removes it then). */
  async remove(url) {
    for (let attempt = 1; attempt <= 8; attempt++) {
      try {
        const res = await fetch(url, { method: 'DELETE', headers: { ...this.headers(), 'Tus-Resumable': '1.0.0' } });
        if (res.status !== 423 && res.status !== 409) return;
      } catch { return; }
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }

  check() {
    if (this.aborted) throw Object.assign(new ApiError(0, 'Upload cancelled.', 0), { cancelled: true });
  }

  /** Forgets the upload URL (after the photo is posted). */
  forget() { localStorage.removeItem(this.key); }

  saved() {
    try { return JSON.parse(localStorage.getItem(this.key)); } catch { return null; }
  }

  remember(url, offset) {
    localStorage.setItem(this.key, JSON.stringify({ url, offset, name: this.file.name, size: this.file.size }));
  }

  report(sent) {
    if (sent < this.sent) return;
    this.sent = sent;
    this.onProgress(sent, this.file.size);
  }

  /** Runs one request, retrying network failures and busy answers (RETRYABLE) with backoff. */
  async withRetry(phase, fn) {
    for (let attempt = 1; ; attempt++) {
      this.check();
      try { return await fn(); } catch (e) {
        this.check();
        if (!RETRYABLE.has(e.status) || attempt > this.maxRetries) throw e;
        await this.backOff(phase, attempt, e);
      }
    }
  }

  /** Tells about the retry, waits (0.5 s doubling up to 10 s, ±25%; `retryBaseMs` scales it), then waits for
   *  the browser to be online. Throws the `cancelled` error when abort() is called meanwhile. */
  async backOff(phase, attempt, error) {
    const delay = Math.round(Math.min(20 * this.retryBaseMs, this.retryBaseMs * 2 ** (attempt - 1)) * (0.75 + Math.random() / 2));
    this.onEvent({ type: 'retry', phase, attempt, delay, status: error.status, reason: error.message });
    await this.pause(delay);
    if (navigator.onLine === false) {
      this.onEvent({ type: 'offline' });
      await new Promise((resolve) => {
        window.addEventListener('online', resolve, { once: true });
        this.controller.signal.addEventListener('abort', resolve, { once: true });
      });
    }
    this.check();
  }

  pause(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.controller.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
    });
  }

  /** The server keeps the upload under a URL of this origin; use its path (the public URL may name another host). */
  static sameOrigin(location) {
    const u = new URL(location, window.location.href);
    return u.pathname + u.search;
  }

  async create() {
    const metadata = `filename ${base64(this.file.name)},filetype ${base64(this.type)}`;
    const res = await this.fetch(this.endpoint, {
      method: 'POST',
      headers: { ...this.headers(), 'Tus-Resumable': '1.0.0', 'Upload-Length': String(this.file.size), 'Upload-Metadata': metadata },
    });
    const location = res.headers.get('Location');
    if (res.status !== 201 || !location) throw new ApiError(130, 'The server did not create the upload.', res.status);
    return TusUpload.sameOrigin(location);
  }

  async head(url) {
    const res = await this.fetch(url, { method: 'HEAD', headers: { ...this.headers(), 'Tus-Resumable': '1.0.0' }, cache: 'no-store' });
    return TusUpload.state(res);
  }

  static state(res) {
    const offset = Number(res.headers.get('Upload-Offset'));
    const name = res.headers.get('X-Parse-File-Name');
    return { offset, done: name ? { fileName: name, fileURL: res.headers.get('X-Parse-File-URL') } : null };
  }

  async fetch(url, init) {
    let res;
    try { res = await fetch(url, init); } catch (e) { throw new ApiError(0, `The server cannot be reached (${e.message}).`, 0); }
    if (res.ok) return res;
    let message = `The server answered ${res.status}.`;
    let code = res.status;
    try { const b = await res.json(); message = b.error ?? message; code = b.code ?? code; } catch { /* HEAD has no body */ }
    throw new ApiError(code, message, res.status);
  }

  /** Sends one chunk from `offset` with XMLHttpRequest (for upload progress events). Resolves to {offset, done}. */
  async patch(url, offset) {
    const end = Math.min(this.file.size, offset + this.chunkBytes);
    const blob = this.file.slice(offset, end);
    const headers = { ...this.headers(), 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' };
    let body = blob;
    if (globalThis.crypto?.subtle) {
      body = await blob.arrayBuffer();
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body));
      let s = '';
      for (const b of digest) s += String.fromCharCode(b);
      headers['Upload-Checksum'] = `sha256 ${btoa(s)}`;
    }
    this.onEvent({ type: 'patch', offset, length: end - offset });
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      this.xhr = xhr;
      xhr.open('PATCH', url);
      for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = (e) => this.report(offset + e.loaded);
      xhr.onload = () => {
        this.xhr = null;
        if (xhr.status === 204) {
          const state = TusUpload.state({ headers: { get: (n) => xhr.getResponseHeader(n) } });
          resolve(state);
          return;
        }
        let message = `The server answered ${xhr.status}.`;
        let code = xhr.status;
        try { const b = JSON.parse(xhr.responseText); message = b.error ?? message; code = b.code ?? code; } catch { /* empty */ }
        const err = new ApiError(code, message, xhr.status);
        const current = xhr.getResponseHeader('Upload-Offset');
        if (current !== null) err.offset = Number(current);
        reject(err);
      };
      xhr.onerror = () => { this.xhr = null; reject(new ApiError(0, 'The connection was lost.', 0)); };
      xhr.onabort = () => { this.xhr = null; reject(new ApiError(0, 'Upload stopped.', 0)); };
      xhr.send(body);
    });
  }
}
