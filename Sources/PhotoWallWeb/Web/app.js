// PhotoWall in the browser: Facebook login (authorization-code redirect), the wall from the feed
// function, comments, and resumable uploads. Plain ES modules, no build step.

import { Api, ApiError, errorFrom } from './api.js';
import { Wall } from './wall.js';
import { LiveWall } from './live.js';
import { Uploader } from './upload.js';
import { avatar, keepTimesCurrent } from './people.js';

const SESSION_KEY = 'photowall.session';
const STATE_KEY = 'photowall.oauthState';
const $ = (id) => document.getElementById(id);

let session = null;
try { session = JSON.parse(localStorage.getItem(SESSION_KEY)); } catch { session = null; }

/** Shows a page-wide message (errors are announced by the alert region). An empty message with
 *  `onlyIfError` clears the banner only when it shows an error (after a later success). */
export function notify(message, kind = 'error', { onlyIfError = false } = {}) {
  const n = $('notice');
  if (onlyIfError && !(n.classList.contains('error') && !n.hidden)) return;
  n.textContent = message;
  n.className = `notice ${kind}`;
  n.hidden = !message;
}

function show(loggedIn) {
  $('login').hidden = loggedIn;
  $('upload').hidden = !loggedIn;
  $('wall').hidden = !loggedIn;
  $('account').hidden = !loggedIn;
  $('me-name').textContent = loggedIn ? `Logged in as ${session.name ?? session.username}` : '';
  $('me-avatar').replaceChildren(...(loggedIn ? [avatar({ objectId: session.objectId, name: session.name ?? session.username })] : []));
  $('me-avatar').title = loggedIn ? $('me-name').textContent : '';
}

function saveSession(s) {
  session = s;
  if (s) localStorage.setItem(SESSION_KEY, JSON.stringify(s)); else localStorage.removeItem(SESSION_KEY);
}

async function main() {
  let config;
  try {
    const res = await fetch('config.json', { cache: 'no-store' });
    if (!res.ok) throw await errorFrom(res);
    config = await res.json();
  } catch (e) {
    notify(`PhotoWall could not start: ${e.message}`);
    return;
  }
  const api = new Api(config, () => session?.sessionToken ?? null);

  // Coming back from the Facebook dialog: ?code=…&state=… (or ?error=…).
  const params = new URLSearchParams(location.search);
  if (params.has('code') || params.has('error')) {
    history.replaceState(null, '', location.pathname);
    await finishLogin(config, api, params);
  }

  $('login-facebook').addEventListener('click', () => startLogin(config));
  if (!config.facebook) {
    $('login-facebook').disabled = true;
    $('login-status').textContent = 'Facebook login is not configured on this server (start it with --facebook-url).';
  }
  $('logout').addEventListener('click', () => logout(api));

  if (!session) { show(false); return; }
  startWall(config, api);
}

function startWall(config, api) {
  show(true);
  const onAuthError = (e) => {
    if (e instanceof ApiError && e.code === 209) { // invalid session token
      saveSession(null);
      show(false);
      notify('Your session has ended: please log in again.');
      return true;
    }
    return false;
  };
  const wall = new Wall(api, { session, onAuthError, notify });
  new Uploader(api, config, { session, wall, onAuthError, notify });
  wall.start();
  new LiveWall(api, config, { session, wall, onAuthError }).start();
  keepTimesCurrent();
}

/** Opens the OAuth dialog (authorization-code flow; the server exchanges the code with the app secret). */
function startLogin(config) {
  const state = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  sessionStorage.setItem(STATE_KEY, state);
  const q = new URLSearchParams({
    client_id: config.facebook.appId,
    redirect_uri: redirectURI(),
    state,
    scope: config.facebook.scope,
    response_type: 'code',
  });
  $('login-status').textContent = 'Opening Facebook…';
  location.assign(`${config.facebook.dialogURL}?${q}`);
}

const redirectURI = () => `${location.origin}${location.pathname}`;

async function finishLogin(config, api, params) {
  const expected = sessionStorage.getItem(STATE_KEY);
  sessionStorage.removeItem(STATE_KEY);
  const status = $('login-status');
  if (params.has('error')) {
    notify(params.get('error_reason') === 'user_denied' ? 'Facebook login was cancelled.' : `Facebook login failed: ${params.get('error_description') ?? params.get('error')}.`);
    return;
  }
  if (!expected || params.get('state') !== expected) {
    notify('Facebook login failed: the answer did not match this page (state). Please try again.');
    return;
  }
  status.textContent = 'Logging in…';
  try {
    const res = await fetch('auth/facebook/exchange', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: params.get('code'), redirectUri: redirectURI() }),
    });
    if (!res.ok) throw await errorFrom(res);
    const fb = await res.json();
    // Sign up or log in exactly as any Parse client does with Facebook.
    const user = await new Api(config, () => null).call('POST', '/users', {
      authData: { facebook: { id: fb.id, access_token: fb.access_token, expiration_date: fb.expiration_date } },
    });
    saveSession({ sessionToken: user.sessionToken, objectId: user.objectId, username: user.username, name: fb.name ?? user.name, fbId: fb.id });
    status.textContent = '';
    notify('');
  } catch (e) {
    status.textContent = '';
    notify(`Login failed: ${e.message}${e.code ? ` (code ${e.code})` : ''}`);
  }
}

async function logout(api) {
  try { await api.call('POST', '/logout', {}); } catch { /* the session is dropped here either way */ }
  saveSession(null);
  location.replace(location.pathname);
}

main();
