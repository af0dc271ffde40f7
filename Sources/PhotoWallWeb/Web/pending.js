// The files of unfinished uploads, kept in IndexedDB (which can hold File objects) under the same key as
// their tus URL in localStorage, so that after a reload the page picks them up again by itself. Failures
// are ignored: without a stored file the page asks for the file to be chosen again.

const DB = 'photowall';
const STORE = 'pending-uploads';

function open() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: 'key' });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function run(mode, work) {
  const db = await open();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = work(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req?.result);
      tx.onerror = tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

/** Keeps `file` (and the comment to post with it) until `dropPendingFile(key)`. */
export async function keepPendingFile(key, file, comment) {
  try { await run('readwrite', (s) => s.put({ key, file, comment, keptAt: Date.now() })); } catch { /* private mode, quota */ }
}

export async function dropPendingFile(key) {
  try { await run('readwrite', (s) => s.delete(key)); } catch { /* nothing kept */ }
}

/** The kept files whose key starts with `prefix`: [{key, file, comment}]. */
export async function pendingFiles(prefix) {
  try {
    const all = await run('readonly', (s) => s.getAll());
    return (all ?? []).filter((e) => e.key.startsWith(prefix) && e.file instanceof Blob);
  } catch {
    return [];
  }
}
