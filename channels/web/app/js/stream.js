// The Stream surface: the conversation, live work-item status rows and
// Silas's notes. Items are kept (the last 200) so a reload shows the same
// stream; answers the server delivers twice (after a reconnect) are
// dropped by reply_to.

import { h, clear, shortTime } from './dom.js';
import { render } from './markdown.js';
import { store } from './store.js';
import { ANSWER_TYPES } from './cards.js';

const STATUS_TEXT = {
  running: 'running', verification_failed: 'check failed, retrying', done: 'done', failed: 'failed',
  stuck: 'paused', blocked: 'blocked', pending: 'waiting',
};

const words = (s) => String(s || '').replace(/_/g, ' ');

// Previews of answers being written: the server streams an answer as
// message_delta events ({reply_to, delta, reset}) when no policy output gate
// must see it whole first. Each answer's pieces are appended, as plain text,
// to a pending bubble; reset empties it first (the model started over). The
// `message` event with the same reply_to is the answer: it replaces the
// preview. Previews are not stored: after a reload only answers show.

class Previews {
  constructor(list, scroll) {
    this.list = list;
    this.scroll = scroll;
    this.open = new Map(); // reply_to -> {node, text}
  }

  /** delta applies one message_delta event. */
  delta(ev) {
    const id = ev.reply_to;
    if (typeof id !== 'string' || !id) return;
    let p = this.open.get(id);
    if (!p) {
      const text = h('div', { class: 'bubble' });
      p = { text, node: h('li', { class: 'msg msg-silas msg-preview', dataset: { preview: id }, 'aria-busy': 'true' }, text, h('div', { class: 'meta', text: 'writing…' })), value: '' };
      this.open.set(id, p);
      this.list.querySelector('[data-placeholder]')?.remove();
      this.list.append(p.node);
    }
    if (ev.reset) p.value = '';
    p.value += typeof ev.delta === 'string' ? ev.delta : '';
    p.text.textContent = p.value;
    this.scroll();
  }

  /** done removes the preview of the answer to id, if any. */
  done(id) {
    const p = this.open.get(id);
    if (!p) return;
    p.node.remove();
    this.open.delete(id);
  }

  clear() {
    for (const p of this.open.values()) p.node.remove();
    this.open.clear();
  }
}

export class Stream {
  constructor({ list, titleOf }) {
    this.list = list;
    this.titleOf = titleOf;
    this.items = store.stream();
    this.nodes = new Map();
    this.isPending = () => false;
    this.previews = new Previews(list, () => this.scroll());
    this.renderAll();
  }

  save() { store.setStream(this.items); }

  renderAll() {
    this.previews?.clear();
    clear(this.list);
    this.nodes.clear();
    if (!this.items.length) {
      this.list.append(h('li', { class: 'empty', dataset: { placeholder: '1' } }, 'Ask Silas for something: a question, or a task to plan and run.'));
    }
    for (const it of this.items) this.list.append(this.node(it));
    this.scroll();
  }

  scroll() {
    const last = this.list.lastElementChild;
    if (last) last.scrollIntoView({ block: 'end' });
  }

  add(it) {
    this.list.querySelector('[data-placeholder]')?.remove();
    this.items.push(it);
    this.save();
    this.list.append(this.node(it));
    this.scroll();
  }

  replace(it) {
    const old = this.nodes.get(it.key);
    const n = this.node(it);
    if (old) old.replaceWith(n); else this.list.append(n);
    this.save();
  }

  /** userSaid shows the owner's message; pending tells if it awaits its ack. */
  userSaid(id, text) {
    this.add({ key: 'u-' + id, kind: 'user', id, text, at: Date.now(), state: 'queued' });
  }

  /** refreshOutbox updates the delivery state of the owner's messages. */
  refreshOutbox(online) {
    for (const it of this.items) {
      if (it.kind !== 'user' || it.state === 'delivered') continue;
      const next = !this.isPending(it.id) ? 'delivered' : online ? 'sending' : 'queued';
      if (next !== it.state) { it.state = next; this.replace(it); }
    }
  }

  onEvent(ev) {
    switch (ev.type) {
      case 'message_delta':
        this.previews.delta(ev);
        break;
      case 'message': {
        this.previews.done(ev.reply_to);
        const key = 's-' + (ev.reply_to || ev.timestamp + ':' + (ev.text || '').slice(0, 32));
        if (this.items.some((x) => x.key === key)) return;
        this.add({ key, kind: 'silas', text: ev.text || '', at: ev.timestamp || Date.now(), register: ev.interaction_register, mode: ev.interaction_mode });
        break;
      }
      case 'interim': {
        // What Silas says while it works on an answer: shown at once, not
        // stored by the server, never the answer itself.
        const key = 'i-' + (ev.id || ev.timestamp + ':' + (ev.text || '').slice(0, 32));
        if (this.items.some((x) => x.key === key)) return;
        this.add({ key, kind: 'interim', text: ev.text || '', at: ev.timestamp || Date.now() });
        break;
      }
      case 'work_item_status': {
        const key = 'w-' + ev.work_item_id;
        const it = this.items.find((x) => x.key === key);
        const row = { key, kind: 'status', id: ev.work_item_id, title: this.titleOf(ev.work_item_id) || ev.work_item_id, status: ev.status, attempt: ev.attempt, detail: ev.detail, at: Date.now() };
        if (it) { Object.assign(it, row); this.replace(it); } else this.add(row);
        break;
      }
      case 'skill_install_result': {
        const key = 'k-' + ev.request_id;
        if (this.items.some((x) => x.key === key)) return;
        const text = ev.status === 'installed' ? `Skill ${ev.name} is installed.` : `Skill ${ev.name} was not installed (${words(ev.status)}): ${ev.detail || ''}`;
        this.add({ key, kind: 'note', text, at: Date.now() });
        break;
      }
      case 'ack':
        this.refreshOutbox(true);
        break;
      case 'error':
        if (ANSWER_TYPES.has(ev.request_type)) return; // shown on the card it answers
        this.add({ key: 'e-' + Date.now() + Math.random(), kind: 'note', text: ev.message || ev.text || 'Something went wrong.', at: Date.now() });
        break;
      default:
    }
  }

  node(it) {
    let n;
    switch (it.kind) {
      case 'user':
        n = h('li', { class: `msg msg-user state-${it.state}`, dataset: { messageId: it.id, state: it.state } },
          h('div', { class: 'bubble' }, it.text),
          h('div', { class: 'meta' }, shortTime(it.at), ' · ', h('span', { class: 'delivery', text: { queued: 'queued, will send when connected', sending: 'sending…', delivered: 'delivered' }[it.state] || it.state })));
        break;
      case 'silas':
        n = h('li', { class: 'msg msg-silas' },
          h('div', { class: 'bubble md' }, render(it.text)),
          h('div', { class: 'meta' }, shortTime(it.at),
            it.register ? h('span', { class: 'register', title: 'How Silas read this turn', text: ` · ${words(it.register)} · ${words(it.mode)}` }) : null));
        break;
      case 'interim':
        n = h('li', { class: 'msg msg-silas msg-interim', dataset: { interim: '1' } },
          h('div', { class: 'bubble' }, it.text),
          h('div', { class: 'meta' }, shortTime(it.at), ' · while working on the answer'));
        break;
      case 'status':
        n = h('li', { class: `status-row status-${it.status}`, dataset: { workItem: it.id, status: it.status } },
          h('span', { class: 'status-dot', 'aria-hidden': 'true' }),
          h('span', { class: 'status-title', text: it.title }),
          h('span', { class: 'status-state', text: ` ${STATUS_TEXT[it.status] || words(it.status)}${it.attempt ? ` · attempt ${it.attempt}` : ''}` }),
          it.detail ? h('span', { class: 'status-detail', text: it.detail }) : null);
        break;
      case 'cardref':
        n = h('li', { class: 'note note-card' }, h('span', { text: it.text + ' ' }),
          h('button', { type: 'button', class: 'linkish', dataset: { goto: 'review' } }, 'Open Review'));
        break;
      default:
        n = h('li', { class: 'note', role: 'note', text: it.text });
    }
    this.nodes.set(it.key, n);
    return n;
  }

  clearAll() { this.items = []; this.save(); this.renderAll(); }
}
