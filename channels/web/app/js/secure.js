// SecureInputCard (spec 0.5.3, 8.1): the secret goes straight to
// POST /secrets/{ref_id} over HTTP and never over the WebSocket; the socket
// only learns {ref_id, success}. The value lives in the password field
// until it is posted, and is cleared right after.

import { h } from './dom.js';

export function secureForm(card, { token, conn, done }) {
  const r = card.ev.request || card.ev;
  const refID = r.ref_id || card.id;
  const id = `secret-${refID}`;
  const field = h('input', {
    type: 'password', id, name: 'secret', required: true, autocomplete: 'off', spellcheck: 'false',
    placeholder: r.input_hint || '', 'aria-describedby': `${id}-help`,
  });
  const status = h('p', { class: 'secure-status', role: 'status' });
  const help = r.guidance?.help_url && /^https?:/i.test(r.guidance.help_url)
    ? h('a', { href: r.guidance.help_url, target: '_blank', rel: 'noopener noreferrer', text: 'Where do I find this?' }) : null;

  const report = (success) => conn()?.send({ type: 'secure_input_completed', ref_id: refID, success });
  const form = h('form', { class: 'secure-form', novalidate: true },
    h('label', { for: id, text: r.label || 'Secret' }), field,
    h('p', { id: `${id}-help`, class: 'muted' }, 'Stored in your keyring; it never passes through the chat. ', help),
    h('div', { class: 'ctas' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Store securely'),
      h('button', { type: 'button', class: 'btn btn-decline', onclick: () => { field.value = ''; report(false); done(false); } }, 'Skip for now')),
    status);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!field.value) { status.textContent = 'Enter the value first.'; field.focus(); return; }
    const body = JSON.stringify({ value: field.value });
    field.value = '';
    status.textContent = 'Storing…';
    try {
      const res = await fetch(`/secrets/${encodeURIComponent(refID)}`, {
        method: 'POST', credentials: 'same-origin', cache: 'no-store',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token()}` }, body,
      });
      const out = await res.json().catch(() => ({}));
      if (res.ok && out.stored === true) {
        report(true);
        done(true);
        return;
      }
      status.textContent = res.status === 404 ? 'Silas is no longer waiting for this secret.'
        : res.status === 409 ? 'This secret was already stored.' : 'The secret could not be stored; try again.';
    } catch {
      status.textContent = 'Could not reach Silas; check the connection and try again.';
    }
  });
  return form;
}
