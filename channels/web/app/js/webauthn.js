// Security keys (spec 0.5.2, the irreversible rung): the owner registers
// a WebAuthn credential (a security key, or this device's platform
// authenticator) under Device > Security keys, and approving an
// irreversible card then signs the challenge the server issued for that
// very card. The server verifies the assertion before anything runs; this
// module only carries the ceremonies between the server and the browser.

import { $, h } from './dom.js';

// base64url without padding, as the server sends and expects binary fields.
export function toB64u(buf) {
  const bytes = new Uint8Array(buf);
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromB64u(s) {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/');
  return Uint8Array.from(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

const available = () => !!(window.PublicKeyCredential && navigator.credentials);

async function post(token, path, body) {
  const res = await fetch(path, {
    method: 'POST', cache: 'no-store', body: JSON.stringify(body || {}),
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token()}` },
  });
  const out = await res.json().catch(() => ({}));
  return { res, out };
}

// failure turns what navigator.credentials threw into a sentence.
function failure(err) {
  if (err?.name === 'NotAllowedError') return 'The security key check was cancelled or timed out; nothing was sent.';
  if (err?.name === 'SecurityError') return 'This address cannot use security keys: open Silas at a host name such as localhost.';
  if (err?.name === 'InvalidStateError') return 'This security key is already registered.';
  return `The security key did not answer (${err?.name || 'error'}); nothing was sent.`;
}

/**
 * approveWithKey runs the assertion for the card requestId: the server's
 * challenge for that card, then the authenticator. It resolves to
 * {assertion} (the PublicKeyCredential as JSON, for the answer's
 * confirmation) or {problem} saying what to do.
 */
export async function approveWithKey(token, requestId) {
  if (!available()) return { problem: 'This browser cannot use security keys; approve this card from one that can.' };
  let r;
  try {
    r = await post(token, '/webauthn/approve/options', { request_id: requestId });
  } catch {
    return { problem: 'Could not reach Silas for the security key challenge; nothing was sent.' };
  }
  if (!r.res.ok) return { problem: r.out.message || `Silas refused the challenge (${r.res.status}); nothing was sent.` };
  const pk = r.out.options.publicKey;
  pk.challenge = fromB64u(pk.challenge);
  pk.allowCredentials = (pk.allowCredentials || []).map((c) => ({ ...c, id: fromB64u(c.id) }));
  let cred;
  try {
    cred = await navigator.credentials.get({ publicKey: pk });
  } catch (err) {
    return { problem: failure(err) };
  }
  const resp = cred.response;
  return {
    assertion: {
      id: cred.id, rawId: toB64u(cred.rawId), type: cred.type,
      response: {
        clientDataJSON: toB64u(resp.clientDataJSON), authenticatorData: toB64u(resp.authenticatorData),
        signature: toB64u(resp.signature), userHandle: resp.userHandle ? toB64u(resp.userHandle) : undefined,
      },
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
    },
  };
}

/**
 * SecurityKeys is the "Security keys" part of the Device screen: the keys
 * registered, a button that registers one more, and a way to remove one.
 */
export class SecurityKeys {
  constructor({ token, toast }) {
    this.token = token;
    this.toast = toast;
    this.list = h('ul', { class: 'key-list', id: 'security-keys-list' });
    this.status = h('p', { class: 'muted', id: 'security-keys-status', role: 'status' });
    this.error = h('p', { class: 'form-error', id: 'security-keys-error', role: 'alert' });
    this.name = h('input', { id: 'security-key-name', maxlength: '64', autocomplete: 'off', placeholder: 'security key' });
    this.button = h('button', { type: 'button', class: 'btn btn-alt', id: 'security-key-register', onclick: () => this.register() }, 'Register a security key');
    const section = h('section', { class: 'security-keys', 'aria-labelledby': 'security-keys-title' },
      h('h3', { id: 'security-keys-title', text: 'Security keys' }),
      h('p', { class: 'muted', text: 'Approving an irreversible card needs a slide and a security key (or this device’s fingerprint or PIN) registered here.' }),
      this.status, this.list,
      h('label', { for: 'security-key-name', text: 'Name for the key (optional)' }), this.name,
      this.error, this.button);
    $('#device-dialog').append(section);
    $('#device-open').addEventListener('click', () => this.refresh());
    if (!available()) {
      this.button.disabled = true;
      this.status.textContent = 'This browser cannot use security keys.';
    }
  }

  async refresh() {
    let res;
    try {
      res = await fetch('/webauthn/credentials', { cache: 'no-store', headers: { Authorization: `Bearer ${this.token()}` } });
    } catch {
      this.status.textContent = 'Could not reach Silas to list the security keys.';
      return;
    }
    const out = await res.json().catch(() => ({}));
    const keys = out.credentials || [];
    this.list.replaceChildren(...keys.map((k) => h('li', { dataset: { keyId: k.id } },
      h('span', { text: `${k.name} (${k.rp_id})` }), ' ',
      h('button', { type: 'button', class: 'btn btn-decline', onclick: () => this.remove(k) }, 'Remove'))));
    if (available()) this.status.textContent = keys.length ? `${keys.length} key${keys.length === 1 ? '' : 's'} registered.` : 'No security key is registered yet.';
  }

  async register() {
    this.error.textContent = '';
    this.button.disabled = true;
    try {
      const problem = await this.ceremony(this.name.value.trim());
      if (problem) {
        this.error.textContent = problem;
        return;
      }
      this.name.value = '';
      this.toast('Security key registered: irreversible cards can be approved with it.');
      await this.refresh();
    } finally {
      this.button.disabled = !available();
    }
  }

  // ceremony registers one credential; it returns '' or what went wrong.
  async ceremony(name) {
    let r;
    try {
      r = await post(this.token, '/webauthn/register/options', name ? { name } : {});
    } catch {
      return 'Could not reach Silas; try again.';
    }
    if (!r.res.ok) return r.out.message || `Silas refused the registration (${r.res.status}).`;
    const pk = r.out.options.publicKey;
    pk.challenge = fromB64u(pk.challenge);
    pk.user.id = fromB64u(pk.user.id);
    pk.excludeCredentials = (pk.excludeCredentials || []).map((c) => ({ ...c, id: fromB64u(c.id) }));
    let cred;
    try {
      cred = await navigator.credentials.create({ publicKey: pk });
    } catch (err) {
      return failure(err);
    }
    const resp = cred.response;
    const credential = {
      id: cred.id, rawId: toB64u(cred.rawId), type: cred.type,
      response: {
        clientDataJSON: toB64u(resp.clientDataJSON), attestationObject: toB64u(resp.attestationObject),
        transports: resp.getTransports ? resp.getTransports() : [],
      },
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
    };
    let done;
    try {
      done = await post(this.token, '/webauthn/register', { ceremony_id: r.out.ceremony_id, name, credential });
    } catch {
      return 'Could not reach Silas to finish the registration; try again.';
    }
    return done.res.status === 201 ? '' : done.out.message || `Silas refused the key (${done.res.status}).`;
  }

  async remove(k) {
    try {
      const r = await post(this.token, `/webauthn/credentials/${encodeURIComponent(k.id)}/remove`);
      this.toast(r.res.ok ? `Removed ${k.name}.` : r.out.message || 'Silas could not remove the key.');
    } catch {
      this.toast('Could not reach Silas; the key is still registered.');
    }
    await this.refresh();
  }
}
