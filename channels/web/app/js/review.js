// The Review surface (spec 0.5.1, 8.2): one active card with full context
// and a numbered "up next" stack of intent + risk. Answers go through the
// risk ladder (confirm.js); an answer the server refuses because the
// request was already answered or timed out brings the card back marked
// expired. After every (re)connect the server's pending approvals
// (GET /approvals/pending) mark restored plan cards that ended while the app
// was away expired at once.

import { h } from './dom.js';
import { store } from './store.js';
import { describe, fromEvent, postExecution, riskLabel, atLeastMedium, ANSWER_TYPES } from './cards.js';
import { ladderFor, confirmChip, slideToConfirm, ladderConfirmation } from './confirm.js';
import { Fatigue } from './fatigue.js';
import { secureForm } from './secure.js';

// An answer the server refuses arrives within a moment; after this long a
// sent answer is taken as accepted.
const ANSWER_SETTLE_MS = 60000;

export class Review {
  constructor({ root, badge, conn, token, toast }) {
    this.root = root;
    this.badge = badge;
    this.conn = conn;
    this.token = token;
    this.toast = toast;
    this.cards = store.cards();
    this.answered = []; // {card, at}
    // work_item_id -> {title, verify, failures}: the plan each work item
    // runs, named by the approval_request's work_item_id.
    this.workPlans = new Map(store.plans());
    this.fatigue = new Fatigue((metrics) => fetch('/ux/metrics', {
      method: 'POST', cache: 'no-store', body: JSON.stringify({ metrics }),
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token()}` },
    }).catch(() => { /* metrics are best effort; the decision itself was sent */ }));
    this.shownAt = new Map();
    this.expiryTimer = 0;
    this.render();
  }

  setConnection(conn) { this.conn = conn; }

  save() { store.setCards(this.cards); }

  /** onEvent takes every server event; it returns true if it made a card. */
  onEvent(ev) {
    if (ev.type === 'error' && ANSWER_TYPES.has(ev.request_type)) {
      this.refused(ev);
      return false;
    }
    if (ev.type === 'work_item_status') {
      this.onStatus(ev);
      return false;
    }
    if (ev.type === 'skill_install_result') {
      this.onSkillResult(ev);
      return false;
    }
    const card = fromEvent(ev);
    if (!card) return false;
    if (ev.type === 'approval_request') this.rememberPlan(ev);
    const known = this.cards.find((c) => c.id === card.id);
    if (known) {
      // The server re-sends a pending request after a reconnect: it is
      // still open, whatever this device thought.
      known.seenAt = card.receivedAt;
      if (known.state === 'expired' && !this.answered.some((a) => a.card.id === card.id)) known.state = 'pending';
    } else if (!this.answered.some((a) => a.card.id === card.id)) {
      this.cards.push(card);
    }
    this.save();
    this.render();
    return true;
  }

  /** planOf returns the plan work item id runs, if the owner was asked about it. */
  planOf(id) { return this.workPlans.get(id); }

  // rememberPlan records the plan an approval_request asks about; a plan
  // asked again under the same id starts without the old run's failures.
  rememberPlan(ev) {
    if (!ev.work_item_id) return;
    this.workPlans.delete(ev.work_item_id);
    this.workPlans.set(ev.work_item_id, { title: ev.title, verify: ev.verify || [], failures: [] });
    this.savePlans();
  }

  savePlans() { store.setPlans([...this.workPlans]); }

  onStatus(ev) {
    const plan = this.planOf(ev.work_item_id);
    if (ev.status === 'verification_failed' && plan) {
      (plan.failures ||= []).push(ev.detail || '');
      this.savePlans();
    }
    // "stuck" is not an end: the work item resumes when Silas starts again.
    if (['done', 'failed', 'blocked'].includes(ev.status)) {
      const card = postExecution({ ...ev, failures: ev.status === 'done' ? [] : plan?.failures?.length ? plan.failures : [ev.detail || ''] }, plan);
      this.cards = this.cards.filter((c) => c.id !== card.id);
      this.cards.push(card);
      this.save();
      this.render();
    }
  }

  // onSkillResult settles a skill card whose request ended: answered on
  // another device (it goes) or expired unanswered (it says so).
  onSkillResult(ev) {
    const card = this.cards.find((c) => c.id === ev.request_id && c.kind === 'skill' && c.state === 'pending');
    if (!card) return;
    if (ev.status === 'expired') {
      card.state = 'expired';
      card.note = 'Nobody answered this card in time, so nothing was installed. Run the install again for a new card.';
    } else {
      this.cards = this.cards.filter((c) => c !== card);
    }
    this.save();
    this.render();
  }

  /**
   * syncSecrets shows a SecureInputCard for every secret the server waits
   * for (GET /secrets/pending) and drops those it no longer waits for.
   */
  syncSecrets(requests) {
    const pending = new Set(requests.map((r) => r.ref_id));
    this.cards = this.cards.filter((c) => c.kind !== 'secure' || pending.has(c.id));
    for (const r of requests) {
      if (!this.cards.some((c) => c.id === r.ref_id)) this.cards.push(fromEvent({ type: 'secure_input_request', ...r }));
    }
    this.save();
    this.render();
  }

  /**
   * syncApprovals takes the server's pending approval requests
   * (GET /approvals/pending), asked at asked (ms): a pending plan card the
   * server no longer lists ended while this device was away (answered
   * elsewhere, timed out, or lost in a restart) and shows expired now
   * rather than when answered. A card the server sent after the question
   * went out is left alone: the answer may predate it.
   */
  syncApprovals(requests, asked) {
    const live = new Map(requests.map((r) => [r.request_id, r]));
    let changed = false;
    for (const c of this.cards) {
      if ((c.kind !== 'plan' && c.kind !== 'skill') || c.state !== 'pending') continue;
      const r = live.get(c.id);
      if (r) {
        const at = Date.parse(r.expires_at);
        if (at && at !== c.expiresAt) { c.expiresAt = at; changed = true; }
        continue;
      }
      if ((c.seenAt ?? c.receivedAt ?? 0) >= asked) continue;
      c.state = 'expired';
      c.note = 'This request expired on the server while this device was away (answered elsewhere, timed out, or Silas restarted), so it can no longer be answered and nothing ran.';
      changed = true;
    }
    if (!changed) return;
    this.save();
    this.render();
  }

  refused(ev) {
    // The secret itself went over HTTP and was stored; the socket notice
    // is a courtesy a server may not take yet.
    if (ev.request_type === 'secure_input_completed') return;
    const text = `${ev.message || ''} ${ev.text || ''}`;
    let i = this.answered.findIndex((a) => text.includes(a.card.id));
    if (i < 0) i = this.answered.findLastIndex((a) => a.card.answerType === ev.request_type);
    if (i < 0) return;
    const [{ card }] = this.answered.splice(i, 1);
    if (ev.code === 'confirmation_required') {
      // The server wants a stronger rung: the card is still pending there
      // and nothing ran; it comes back with the server's reason.
      card.state = 'pending';
      this.cards = [card, ...this.cards.filter((c) => c.id !== card.id)];
      this.setRefusal(card, ev.message);
      return;
    }
    card.state = 'expired';
    card.note = ev.code === 'not_supported'
      ? 'This server cannot take this answer yet, so it was not applied and nothing ran.'
      : 'This request had already expired on the server, so your answer was not applied and nothing ran.';
    this.cards = [card, ...this.cards.filter((c) => c.id !== card.id)];
    this.save();
    this.render();
  }

  // setRefusal shows why the last answer to card did not count.
  setRefusal(card, message) {
    card.refusal = message;
    this.save();
    this.render(true);
  }

  get pending() { return this.cards.filter((c) => c.state === 'pending'); }

  expireLocally() {
    const now = Date.now();
    let changed = false;
    for (const c of this.cards) {
      if (c.state === 'pending' && c.expiresAt && c.expiresAt <= now && c.kind !== 'post') {
        c.state = 'expired';
        c.note = 'Time ran out on this request; the server treated it as declined and ran nothing.';
        changed = true;
      }
    }
    if (changed) this.save();
    const next = Math.min(...this.cards.filter((c) => c.state === 'pending' && c.expiresAt).map((c) => c.expiresAt));
    clearTimeout(this.expiryTimer);
    if (Number.isFinite(next)) this.expiryTimer = setTimeout(() => this.render(true), Math.max(1000, next - now));
  }

  /** render draws the queue; fresh redraws the active card too. */
  render(fresh = false) {
    this.expireLocally();
    const pending = this.pending;
    const heavy = pending.filter((c) => atLeastMedium(c.risk)).length;
    const dense = heavy > 5; // spec 0.5.4 item 4
    this.badge.textContent = pending.length ? String(pending.length) : '';
    this.badge.hidden = pending.length === 0;
    this.badge.classList.toggle('elevated', dense);
    this.badge.setAttribute('aria-label', `${pending.length} pending decision${pending.length === 1 ? '' : 's'}`);

    const before = [];
    if (dense) {
      before.push(h('div', { class: 'density-cue', role: 'status' },
        h('strong', { text: `${heavy} decisions of medium risk or more are waiting.` }),
        ' Take them one at a time; nothing expires faster because of the queue.'));
    }
    const fast = this.fatigue.tooFast();
    if (fast) {
      before.push(h('div', { class: 'fatigue-cue', role: 'status' },
        h('strong', { text: 'You have been deciding in under a second.' }), ' Give this one a closer read.'));
    }
    const [active, ...rest] = this.cards;
    // The active card is kept as it is when only the queue around it
    // changed, so an edit, a checkbox or the focus in it survives.
    let activeEl = this.root.querySelector(':scope > .card');
    if (!active) activeEl = null;
    else if (fresh || !activeEl || activeEl.dataset.cardId !== active.id || activeEl.dataset.state !== active.state || activeEl.dataset.fast !== String(fast)) {
      activeEl = this.renderCard(active);
    }
    for (const child of [...this.root.children]) if (child !== activeEl) child.remove();
    this.root.prepend(...before);
    if (!active) {
      this.root.append(h('div', { class: 'empty' }, h('p', { text: 'Nothing to decide. New plans and questions from Silas land here.' })));
      return;
    }
    if (!activeEl.isConnected) this.root.append(activeEl);
    if (rest.length) {
      this.root.append(h('h3', { class: 'upnext-title', id: 'upnext-title', text: 'Up next' }),
        h('ol', { class: 'upnext', 'aria-labelledby': 'upnext-title' }, rest.map((c) => {
          const d = describe(c);
          return h('li', {}, h('button', { type: 'button', class: 'upnext-item', onclick: () => this.promote(c.id) },
            h('span', { class: 'upnext-intent', text: d.intent }), riskBadge(c)));
        })));
    }
  }

  promote(id) {
    const i = this.cards.findIndex((c) => c.id === id);
    if (i <= 0) return;
    const [c] = this.cards.splice(i, 1);
    this.cards.unshift(c);
    this.save();
    this.render();
    this.root.querySelector('.card')?.focus();
  }

  renderCard(card) {
    const d = describe(card);
    if (!this.shownAt.has(card.id)) this.shownAt.set(card.id, performance.now());
    const open = card.risk === 'high' || card.risk === 'irreversible';
    const actions = h('div', { class: 'ctas' });
    const step = h('div', { class: 'ladder', 'aria-live': 'polite' });
    const input = d.input ? d.input() : null;
    const el = h('article', {
      class: `card risk-${card.risk || 'none'} kind-${card.kind}${card.state === 'expired' ? ' expired' : ''}${this.fatigue.tooFast() && atLeastMedium(card.risk) ? ' attention' : ''}`,
      tabindex: '-1', 'aria-labelledby': `intent-${card.id}`,
      dataset: { cardId: card.id, kind: card.kind, risk: card.risk || 'none', state: card.state, fast: String(this.fatigue.tooFast()) },
    },
    h('div', { class: 'card-body' },
      h('div', { class: 'card-head' }, h('span', { class: 'card-kind', text: d.label }), riskBadge(card)),
      h('h3', { class: 'intent', id: `intent-${card.id}`, text: d.intent }),
      d.rationale ? h('p', { class: 'rationale', text: d.rationale }) : null,
      d.affected ? h('p', { class: 'affected' }, d.affected) : null,
      card.expiresAt && card.state === 'pending' && card.kind !== 'post' ? h('p', { class: 'expiry muted', text: `Answer by ${new Date(card.expiresAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}` }) : null,
      card.state === 'expired' ? h('p', { class: 'expired-note', role: 'alert', text: card.note || 'This request expired.' }) : null,
      card.state === 'pending' && card.refusal ? h('p', { class: 'expired-note refusal', role: 'alert', text: card.refusal }) : null),
    card.state === 'pending' && d.secure ? secureForm(card, { token: this.token, conn: () => this.conn, done: (ok) => this.finish(card, ok ? 'stored' : 'cancelled') }) : null,
    card.state === 'pending' ? input : null,
    d.details ? h('details', { class: 'details', open }, h('summary', { text: 'Details' }), h('div', { class: 'details-body' }, d.details())) : null,
    actions, step);

    if (card.state === 'expired') {
      actions.append(h('button', { type: 'button', class: 'btn btn-primary', onclick: () => this.dismiss(card) }, 'Dismiss'));
      return el;
    }
    for (const c of d.ctas) {
      actions.append(h('button', {
        type: 'button', class: `btn btn-${c.tone}`, dataset: { verdict: c.answer ? Object.values(c.answer)[0] : 'dismiss' },
        onclick: () => this.choose(card, c, el, actions, step),
      }, c.label));
    }
    return el;
  }

  async choose(card, c, el, actions, step) {
    if (c.local) { this.finish(card, 'dismissed'); return; }
    const answer = { ...c.answer };
    if (c.selection) {
      const ids = [...el.querySelectorAll('.batch-items input:checked')].map((x) => x.value);
      const all = card.ev.batch?.items?.map((i) => i.item_id) || [];
      if (ids.length !== all.length) { answer.verdict = 'edit_selection'; answer.selected_item_ids = ids; }
    }
    if (c.edit) answer.edited_text = el.querySelector('.draft-text')?.value ?? '';
    if (c.freetext) {
      const free = el.querySelector('.freetext')?.value.trim();
      if (free) answer.freetext = free;
    }
    // Safe answers (decline, defer, skip) run nothing: one tap is enough.
    if (!c.safe) {
      const ladder = ladderFor(card.risk);
      actions.hidden = true;
      let ok = true;
      if (ladder === 'chip') ok = await confirmChip(step, c.label);
      else if (ladder.startsWith('slide')) ok = await slideToConfirm(step, c.label);
      if (ok) {
        // The rung goes with the answer: the server refuses an approval
        // of a high card without the slide, and of an irreversible one
        // without a security key assertion for this very card.
        const r = await ladderConfirmation(card.risk, this.token, card.id);
        if (r.problem) {
          ok = false;
          this.toast(r.problem);
          this.setRefusal(card, r.problem);
        } else if (r.confirmation) {
          answer.confirmation = r.confirmation;
        }
      }
      actions.hidden = false;
      if (!ok) { actions.querySelector('button')?.focus(); return; }
    }
    // The protocol has no undo frame yet: an undo is the answer to the
    // undo request the server names on the finished work item.
    const frame = c.undo ? { type: 'decision_response', request_id: card.ev.undo_request_id, ...answer }
      : { type: card.answerType, request_id: card.id, ...answer };
    if (!this.conn?.send(frame)) {
      this.toast('Offline: your answer was not sent. It stays here until you are connected.');
      return;
    }
    const verdict = answer.verdict || answer.selected_value || answer.selected_action || answer.action;
    this.fatigue.record(card, performance.now() - (this.shownAt.get(card.id) ?? performance.now()),
      { declined: c.tone === 'decline', freetext: !!answer.freetext, undo: !!c.undo, verdict });
    this.finish(card, c.label, true);
  }

  finish(card, what, sent = false) {
    this.cards = this.cards.filter((x) => x.id !== card.id);
    this.shownAt.delete(card.id);
    if (sent) {
      const now = Date.now();
      this.answered = this.answered.filter((a) => now - a.at < ANSWER_SETTLE_MS);
      this.answered.push({ card, at: now });
    }
    this.save();
    this.render();
    if (what && sent) this.toast(`Sent: ${what}`);
    this.root.querySelector('.card')?.focus();
  }

  dismiss(card) { this.finish(card, null); }

  /** clearAll forgets the queue (on logout). */
  clearAll() { this.cards = []; this.workPlans.clear(); this.save(); this.render(); }
}

function riskBadge(card) {
  if (!card.risk) return null;
  return h('span', { class: `badge risk-${card.risk}`, text: riskLabel(card.risk) });
}
