// Silas, the decision cockpit (spec 0.5, 8.2): boots the owner's session and
// wires the connection to the three surfaces.

import { $ } from './js/dom.js';
import { store } from './js/store.js';
import { Connection } from './js/connection.js';
import { Stream } from './js/stream.js';
import { Review } from './js/review.js';
import { Activity } from './js/activity.js';
import { Goals } from './js/goals.js';
import { CARD_EVENTS } from './js/cards.js';
import { DeviceKey } from './js/device.js';
import { DeviceScreen } from './js/settings.js';
import { SecurityKeys } from './js/webauthn.js';
import { PushToggle } from './js/push.js';

const DESKTOP = window.matchMedia('(min-width: 1024px)');
const STATE_TEXT = { online: 'Connected', connecting: 'Connecting…', offline: 'Offline, reconnecting…', unauthorized: 'Signed out' };

let conn = null;
let toastTimer = 0;

function toast(text) {
  const t = $('#toast');
  t.textContent = text;
  t.classList.add('show');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove('show'), 4000);
}

const review = new Review({ root: $('#review-root'), badge: $('#review-badge'), conn: null, token: () => store.token(), toast });
const stream = new Stream({ list: $('#stream-list'), titleOf: (id) => review.planOf(id)?.title });
const activity = new Activity({
  list: $('#activity-list'), more: $('#activity-more'), status: $('#activity-status'), metrics: $('#metrics'),
  token: () => store.token(), fatigue: review.fatigue,
});

const goals = new Goals({ root: $('#goals'), list: $('#goals-list'), status: $('#goals-status'), token: () => store.token(), toast });
const device = new DeviceKey({ token: () => store.token() });
new DeviceScreen({ device, toast });
new SecurityKeys({ token: () => store.token(), toast });
const deviceLoaded = device.load();

// --- surfaces -------------------------------------------------------------

const TABS = ['stream', 'review', 'activity'];

function showTab(name, focus = false) {
  const app = $('#app');
  app.dataset.tab = name;
  for (const t of TABS) {
    const tab = $(`#tab-${t}`);
    tab.setAttribute('aria-selected', String(t === name));
    tab.tabIndex = t === name ? 0 : -1;
  }
  if (focus) $(`#tab-${name}`).focus();
  if (name === 'activity') { activity.refresh(); goals.refresh(); }
  setActivityOpen(name === 'activity' && DESKTOP.matches);
}

function setActivityOpen(open) {
  $('#app').classList.toggle('activity-open', open);
  $('#activity-toggle').setAttribute('aria-expanded', String(open));
  if (open) { activity.refresh(); goals.refresh(); $('#activity-close').focus(); }
}

for (const t of TABS) $(`#tab-${t}`).addEventListener('click', () => showTab(t));
$('.tabs').addEventListener('keydown', (e) => {
  const i = TABS.indexOf($('#app').dataset.tab);
  if (e.key === 'ArrowRight') showTab(TABS[(i + 1) % TABS.length], true);
  else if (e.key === 'ArrowLeft') showTab(TABS[(i + TABS.length - 1) % TABS.length], true);
  else return;
  e.preventDefault();
});
$('#activity-toggle').addEventListener('click', () => setActivityOpen(!$('#app').classList.contains('activity-open')));
$('#activity-close').addEventListener('click', () => { setActivityOpen(false); $('#activity-toggle').focus(); });
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && $('#app').classList.contains('activity-open')) setActivityOpen(false);
});
$('#stream-list').addEventListener('click', (e) => {
  if (!e.target.closest('[data-goto="review"]')) return;
  showTab('review');
  $('.review-root > .card')?.focus();
});

// --- session ---------------------------------------------------------------

function showLogin(error = '') {
  $('#app').hidden = true;
  $('#login').hidden = false;
  $('#login-error').textContent = error;
  $('#token').focus();
}

function setConnState({ state }) {
  const pill = $('#conn');
  pill.dataset.state = state;
  pill.textContent = STATE_TEXT[state] || state;
  stream.refreshOutbox(state === 'online');
  if (state === 'online') {
    pullPendingSecrets();
    pullPendingApprovals();
    if (!visitRecorded) recordVisit();
    deviceLoaded.then(() => device.check());
  }
  if (state === 'unauthorized') {
    conn = null;
    store.clearToken();
    showLogin('That token was refused. Check it with `silas token` and try again.');
  }
}

// The owner's visit is recorded once per app open (offline at open: at the
// first connect), so Activity can show what happened since the last one.
let visitRecorded = false;
async function recordVisit() {
  visitRecorded = true;
  if (!(await activity.visit())) visitRecorded = false;
}

// Secrets the server waits for are asked again after every (re)connect:
// a secure_input_request sent while this device was away is not lost.
async function pullPendingSecrets() {
  try {
    const res = await fetch('/secrets/pending', { cache: 'no-store', headers: { Authorization: `Bearer ${store.token()}` } });
    if (!res.ok) return; // an older server without secure input
    const body = await res.json();
    if (Array.isArray(body.requests)) review.syncSecrets(body.requests);
  } catch {
    // Offline again: the next connect asks again.
  }
}

// Plan cards restored from this device's storage may have ended on the
// server while it was away: ask which are still open after every
// (re)connect.
async function pullPendingApprovals() {
  const asked = Date.now();
  try {
    const res = await fetch('/approvals/pending', { cache: 'no-store', headers: { Authorization: `Bearer ${store.token()}` } });
    if (!res.ok) return; // an older server: refused answers still mark cards expired
    const body = await res.json();
    if (Array.isArray(body.requests)) review.syncApprovals(body.requests, asked);
  } catch {
    // Offline again: the next connect asks again.
  }
}

function onServerEvent(ev) {
  if (ev.type === 'session' && ev.sandbox) showSandbox(ev.sandbox);
  // Silas does not say on the socket that it refused a signature: ask
  // whether it still accepts this key once a signed message is in.
  if (ev.type === 'ack' && device.state === 'enrolled') device.check();
  const isNewCard = CARD_EVENTS[ev.type] && !review.cards.some((c) => c.id === (ev.request_id || ev.ref_id));
  review.onEvent(ev);
  stream.onEvent(ev);
  if (isNewCard && review.cards.some((c) => c.id === (ev.request_id || ev.ref_id))) {
    stream.add({ key: 'c-' + (ev.request_id || ev.ref_id), kind: 'cardref', text: `${ev.title || 'A decision'} is waiting for you in Review.`, at: Date.now() });
  }
}

// showSandbox warns, for as long as it holds, that work either runs without
// isolation (the owner allowed it) or cannot run at all on this host.
function showSandbox(sb) {
  let text = '';
  if (!sb.backend) {
    text = 'Work cannot run on this host: no isolating sandbox works here, so approved plans end blocked. Run `silas doctor` to see what to enable.';
  } else if (!sb.isolated) {
    text = `Work runs WITHOUT isolation (${sb.backend}, silas.sandbox.allow_unisolated): agent code can read everything Silas's user can, its keys included.`;
  }
  $('#sandbox-banner').hidden = !text;
  $('#sandbox-banner-text').textContent = text;
}

function startSession() {
  $('#login').hidden = true;
  $('#app').hidden = false;
  conn = new Connection(store.token(), async (text) => { await deviceLoaded; return device.sign(text); });
  review.setConnection(conn);
  stream.isPending = (id) => conn?.pending(id) ?? false;
  conn.addEventListener('state', (e) => setConnState(e.detail));
  conn.addEventListener('event', (e) => onServerEvent(e.detail));
  recordVisit();
  conn.start();
  stream.refreshOutbox(false);
  showTab($('#app').dataset.tab || 'stream');
}

$('#login-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const t = $('#token').value.trim();
  if (!t) return;
  $('#token').value = '';
  store.setToken(t);
  startSession();
});

$('#logout').addEventListener('click', () => {
  // Leaving this browser: its key goes too (revoked while the token is
  // still here), so the next person at it cannot sign as the owner.
  device.forget();
  conn?.stop();
  conn = null;
  store.clearSession();
  stream.clearAll();
  review.clearAll();
  showLogin();
});

$('#composer').addEventListener('submit', (e) => {
  e.preventDefault();
  const box = $('#say');
  const text = box.value.trim();
  if (!text || !conn) return;
  box.value = '';
  const id = conn.say(text);
  stream.userSaid(id, text);
  stream.refreshOutbox(conn.online);
});
$('#say').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $('#composer').requestSubmit();
  }
});

if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('/sw.js').catch(() => { /* the app works without the offline shell */ });
}

// Notifications of pending cards: subscribed from the header button only.
new PushToggle($('#push-toggle'), () => store.token(), toast);

if (store.token()) startSession(); else showLogin();
