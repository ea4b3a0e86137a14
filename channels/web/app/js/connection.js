// The owner's WebSocket: authenticates with the first frame, reconnects
// with capped exponential backoff, and keeps every chat message in an
// outbox until the server acknowledges it (an ack means the message is
// journaled). Messages written while offline wait there and go out in
// order once the session is back; the server drops duplicates by
// message_id, so resending after a reconnect is safe.
//
// With a signer (this device's key), every message is signed as it goes
// out, with a fresh nonce and timestamp each time: a message that waited
// offline is not refused as stale, and a resend is not a replay.

import { store } from './store.js';

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15000;
const CLOSE_UNAUTHORIZED = 4001;
const RETRYABLE = new Set(['busy', 'rate_limited', 'internal']);
const RETRY_MS = 5000;

/** States: offline, connecting, online, unauthorized. */
export class Connection extends EventTarget {
  constructor(token, signer = null) {
    super();
    this.token = token;
    this.signer = signer; // async (text) => signature fields, or null
    this.sending = Promise.resolve();
    this.ws = null;
    this.state = 'offline';
    this.attempt = 0;
    this.timer = 0;
    this.stopped = false;
    this.outbox = store.outbox();
    this.onBrowserOnline = () => this.reconnectNow();
    this.onVisible = () => { if (document.visibilityState === 'visible') this.reconnectNow(); };
  }

  start() {
    this.stopped = false;
    window.addEventListener('online', this.onBrowserOnline);
    document.addEventListener('visibilitychange', this.onVisible);
    this.open();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.retryTimer);
    window.removeEventListener('online', this.onBrowserOnline);
    document.removeEventListener('visibilitychange', this.onVisible);
    if (this.ws) this.ws.close(1000, 'logout');
    this.ws = null;
  }

  setState(state, detail = {}) {
    this.state = state;
    this.dispatchEvent(new CustomEvent('state', { detail: { state, ...detail } }));
  }

  open() {
    if (this.stopped || this.ws) return;
    clearTimeout(this.timer);
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    let ws;
    try {
      ws = new WebSocket(`${proto}//${location.host}/ws`);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    this.setState('connecting', { attempt: this.attempt });
    // receipts: an answer counts as delivered only once this app confirms
    // it (below), so one lost with a dropped socket comes again.
    ws.addEventListener('open', () => ws.send(JSON.stringify({ type: 'auth', token: this.token, receipts: true })));
    ws.addEventListener('message', (e) => this.onFrame(e.data));
    ws.addEventListener('close', (e) => this.onClose(ws, e));
  }

  onFrame(data) {
    let ev;
    try {
      ev = JSON.parse(data);
    } catch {
      return;
    }
    if (!ev || typeof ev.type !== 'string') return;
    if (ev.type === 'session') {
      this.attempt = 0;
      this.setState('online');
      this.flush();
    } else if (ev.type === 'ack') {
      this.acked(ev.message_id);
    } else if (ev.type === 'error' && ev.request_type === 'message' && RETRYABLE.has(ev.code)) {
      // The server did not take a message and does not say which: resend
      // the whole outbox a little later; it drops the ones it already has.
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => { if (this.online) this.flush(); }, RETRY_MS);
    }
    this.dispatchEvent(new CustomEvent('event', { detail: ev }));
    if (ev.type === 'message' && typeof ev.reply_to === 'string' && ev.reply_to && this.online) {
      // Shown (or dropped as a duplicate) by now: confirm the receipt.
      this.ws.send(JSON.stringify({ type: 'received', reply_to: ev.reply_to }));
    }
  }

  onClose(ws, e) {
    if (this.ws !== ws) return;
    this.ws = null;
    if (this.stopped) return;
    if (e.code === CLOSE_UNAUTHORIZED) {
      this.stopped = true;
      this.setState('unauthorized', { reason: e.reason });
      return;
    }
    this.scheduleReconnect();
  }

  scheduleReconnect() {
    this.attempt++;
    const cap = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(this.attempt - 1, 10));
    const delay = cap / 2 + Math.random() * (cap / 2); // jitter: many tabs do not reconnect in step
    this.setState('offline', { retryAt: Date.now() + delay, attempt: this.attempt });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
  }

  /** reconnectNow skips the backoff wait, when the browser says it is back. */
  reconnectNow() {
    if (this.stopped || this.ws) return;
    this.attempt = 0;
    this.open();
  }

  get online() {
    return this.state === 'online' && this.ws && this.ws.readyState === WebSocket.OPEN;
  }

  /** send sends a control frame (a card response) now; false if offline. */
  send(frame) {
    if (!this.online) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  /** say queues a chat message and sends it if online; returns its id. */
  say(text) {
    const id = newID();
    this.outbox.push({ id, text, at: Date.now() });
    store.setOutbox(this.outbox);
    if (this.online) this.transmit(this.outbox.at(-1));
    return id;
  }

  /** pending reports whether message id still waits for its ack. */
  pending(id) {
    return this.outbox.some((m) => m.id === id);
  }

  flush() {
    for (const m of this.outbox) this.transmit(m);
  }

  // transmit sends one outbox message on the current socket. Signing is
  // asynchronous, so sends are chained to keep the outbox's order; a
  // message acked or a socket closed meanwhile is skipped (the next
  // session's flush sends it again).
  transmit(m) {
    const ws = this.ws;
    this.sending = this.sending.then(async () => {
      let signed = null;
      if (this.signer) {
        try {
          signed = await this.signer(m.text);
        } catch {
          signed = null; // no usable key: the message goes unsigned, as auth
        }
      }
      if (ws !== this.ws || !this.online || !this.pending(m.id)) return;
      ws.send(JSON.stringify({ type: 'message', text: m.text, message_id: m.id, ...signed }));
    });
  }

  acked(id) {
    const n = this.outbox.length;
    this.outbox = this.outbox.filter((m) => m.id !== id);
    if (this.outbox.length !== n) store.setOutbox(this.outbox);
  }
}

/** newID returns a random id for a message or a card answer. */
export function newID() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}
