// People and time on the wall: avatars (initials on a colour derived from the user's id) and relative
// times ("3 min ago") with the full date on hover, kept current by one timer for the whole page.

const fullDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'short' });
const shortDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** The full date, e.g. "Wednesday, 2 December 2026 at 02:10" ('' for a bad date). */
export function fullWhen(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : fullDate.format(d);
}

/** "just now", "3 min ago", "5 hours ago", "yesterday", "4 days ago", then the date (e.g. "Dec 2, 2026"). */
export function relativeWhen(iso, now = Date.now()) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const s = Math.round((now - d.getTime()) / 1000);
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min ago`;
  if (s < 86400) return relative.format(-Math.round(s / 3600), 'hour');
  if (s < 7 * 86400) return relative.format(-Math.round(s / 86400), 'day');
  return shortDate.format(d);
}

/** A `<time>` showing the relative time, with the full date in `title` and `datetime`; updated by `tick`. */
export function timeElement(iso, className = 'when') {
  const t = document.createElement('time');
  t.className = className;
  setTime(t, iso);
  return t;
}

/** Fills an existing `<time>` (as `timeElement` makes them). */
export function setTime(t, iso) {
  t.dateTime = iso;
  t.title = fullWhen(iso);
  t.textContent = relativeWhen(iso);
  t.dataset.relative = '';
}

/** Refreshes every relative time on the page (every 30 s, and when the page becomes visible again). */
export function keepTimesCurrent() {
  const tick = () => {
    const now = Date.now();
    for (const t of document.querySelectorAll('time[data-relative]')) {
      const text = relativeWhen(t.dateTime, now);
      if (t.textContent !== text) t.textContent = text;
    }
  };
  setInterval(tick, 30_000);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) tick(); });
}

/** Up to two initials: "Ava Lindqvist" → "AL", "ravi" → "R". */
export function initials(name) {
  const words = String(name ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return '?';
  const first = [...words[0]][0];
  const last = words.length > 1 ? [...words[words.length - 1]][0] : '';
  return (first + last).toUpperCase();
}

/** A stable colour for an id (FNV-1a over its characters → hue), dark enough for white text (WCAG AA). */
export function avatarColor(id) {
  let h = 0x811c9dc5;
  for (const ch of String(id ?? '')) { h ^= ch.codePointAt(0); h = Math.imul(h, 0x01000193) >>> 0; }
  return `hsl(${h % 360} 55% 36%)`;
}

/** `<span class="avatar">` with the person's initials on their colour (decorative: the name is beside it). */
export function avatar(user, className = 'avatar') {
  const span = document.createElement('span');
  span.className = className;
  span.setAttribute('aria-hidden', 'true');
  span.textContent = initials(user?.name);
  span.style.backgroundColor = avatarColor(user?.objectId ?? user?.fbId ?? user?.name);
  return span;
}
