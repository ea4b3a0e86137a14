// This device's owner key (spec 3.1, 5.8): an Ed25519 key pair made by
// WebCrypto with a non-extractable private key, kept as a CryptoKey in
// IndexedDB (never in localStorage, never exported), enrolled with a
// one-time code from `silas devices add`. Every chat message is signed
// with it, so it reaches Silas with owner taint instead of auth.
//
// The server does not say on the socket when it stops trusting a key; the
// app asks GET /devices after connecting and after each signed message is
// acknowledged, and shows a revoked or unknown key at once.

import { messageBytes, base64, wellFormed } from './canonical.js';

const DB_NAME = 'silas-device';
const DB_STORE = 'keys';
const SLOT = 'owner';
const ALG = { name: 'Ed25519' };
// Silas refuses a signature whose timestamp is more than 5 minutes from its
// own clock. A device clock off by more than this is corrected by the
// server's Date header; a smaller offset is left alone.
const SKEW_FIX_MS = 2 * 60 * 1000;

/** States: loading, unsupported, none, enrolled, revoked, unknown. */
export class DeviceKey extends EventTarget {
  constructor({ token }) {
    super();
    this.token = token;
    this.state = 'loading';
    this.rec = null; // {privateKey, publicKey, device, status}
    this.checking = null;
    this.skewMs = 0; // server clock minus this device's, when it matters
  }

  /** device is the server's view of this key when it was last seen. */
  get device() { return this.rec?.device || null; }

  set(state) {
    this.state = state;
    this.dispatchEvent(new CustomEvent('change', { detail: { state } }));
  }

  async load() {
    if (!window.indexedDB || !crypto.subtle) { this.set('unsupported'); return; }
    try {
      this.rec = await slot('readonly', (s) => s.get(SLOT));
    } catch {
      this.rec = null;
    }
    this.set(this.rec ? this.rec.status || 'enrolled' : 'none');
  }

  /**
   * enrol makes a new key pair and enrols its public key with code. The old
   * key, if any, is replaced only once the server took the new one. It
   * returns '' or a message saying what to do.
   */
  async enrol(code, name) {
    let pair;
    try {
      pair = await crypto.subtle.generateKey(ALG, false, ['sign', 'verify']);
    } catch {
      this.set('unsupported');
      return 'This browser cannot create Ed25519 keys; update it to sign your messages.';
    }
    const raw = await crypto.subtle.exportKey('raw', pair.publicKey);
    const body = { code: code.trim(), public_key: base64(raw) };
    if (name) body.name = name;
    let res;
    try {
      res = await this.api('/devices/enroll', { method: 'POST', body: JSON.stringify(body) });
    } catch {
      return 'Could not reach Silas; check the connection and try again.';
    }
    const out = await res.json().catch(() => ({}));
    if (res.status !== 201 || !out.device) return enrolError(res.status, out.message);
    const rec = { privateKey: pair.privateKey, publicKey: pair.publicKey, device: out.device, status: 'enrolled' };
    try {
      await slot('readwrite', (s) => s.put(rec, SLOT));
    } catch {
      return 'The key was enrolled but this browser could not store it; revoke it with `silas devices revoke ' + out.device.id + '` and try again.';
    }
    this.rec = rec;
    this.set('enrolled');
    return '';
  }

  /**
   * sign returns the signature fields of a chat message, or null when this
   * device has no key Silas accepts (the message then goes unsigned, as
   * auth). A fresh nonce and timestamp every time: a resend after a
   * reconnect is signed anew.
   */
  async sign(text) {
    if (this.state !== 'enrolled' || !this.rec) return null;
    const nonce = crypto.randomUUID();
    const timestamp = new Date(Date.now() + this.skewMs).toISOString();
    const sig = await crypto.subtle.sign(ALG, this.rec.privateKey, messageBytes(text, timestamp, nonce));
    return { text: wellFormed(text), nonce, timestamp, signature: base64(sig) };
  }

  /** check asks Silas whether it still accepts this key. */
  check() {
    if (!this.rec || this.checking) return this.checking;
    this.checking = this.fetchStatus().finally(() => { this.checking = null; });
    return this.checking;
  }

  async fetchStatus() {
    let list;
    try {
      const res = await this.api('/devices', { method: 'GET' });
      if (!res.ok) return; // signed out or an older server: nothing learned
      this.learnClock(res.headers.get('Date'));
      list = (await res.json()).devices;
    } catch {
      return; // offline: the next connect asks again
    }
    if (!Array.isArray(list) || !this.rec) return;
    const d = list.find((x) => x.id === this.rec.device.id);
    const status = !d ? 'unknown' : d.revoked ? 'revoked' : 'enrolled';
    if (d) this.rec.device = d;
    if (status !== this.rec.status) {
      this.rec.status = status;
      await slot('readwrite', (s) => s.put(this.rec, SLOT)).catch(() => {});
    }
    this.set(status); // also when unchanged: the clock offset may be news
  }

  learnClock(date) {
    const server = date ? Date.parse(date) : NaN;
    if (Number.isNaN(server)) return;
    const skew = server - Date.now();
    this.skewMs = Math.abs(skew) > SKEW_FIX_MS ? skew : 0;
  }

  /**
   * forget revokes the key on the server (so nobody holding this browser's
   * storage can sign as the owner) and deletes it here. The revoke request
   * is built at once, with the token of the session still open.
   */
  async forget() {
    const id = this.rec?.device?.id;
    const revoked = id ? this.api(`/devices/${encodeURIComponent(id)}/revoke`, { method: 'POST' }).then((r) => r.ok || r.status === 404, () => false) : Promise.resolve(true);
    await slot('readwrite', (s) => s.delete(SLOT)).catch(() => {});
    this.rec = null;
    if (this.state !== 'unsupported') this.set('none');
    return revoked;
  }

  api(path, init) {
    return fetch(path, {
      ...init, cache: 'no-store', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.token()}` },
    });
  }
}

function enrolError(status, message) {
  switch (status) {
    case 401: return 'Silas refused the owner token; log in again.';
    case 403: return 'That code is unknown, used or expired. Run `silas devices add` for a new one.';
    case 409: return 'Silas already has this key; try again to make a new one.';
    case 400: return message || 'Silas refused the request; check the code and the name.';
    default: return `Enrolment failed (HTTP ${status}); try again.`;
  }
}

function openDB() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(DB_STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

// slot runs one request on the key store and resolves with its result once
// the transaction is committed.
async function slot(mode, fn) {
  const db = await openDB();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(DB_STORE, mode);
      const req = fn(tx.objectStore(DB_STORE));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}
