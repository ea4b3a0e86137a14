// The friction steps of the risk ladder (spec 0.5.2): a confirm chip for
// medium risk, a slide for high, a slide plus a security key (strong
// authentication the server verifies) for irreversible actions. Each
// gesture resolves a promise with true (go) or false (cancelled); nothing
// here waits on a timer, so no decision is ever throttled (spec 0.5.4
// item 5). The server enforces the slide and the key: an approving answer
// carries the confirmation of its rung (ladderConfirmation).

import { h } from './dom.js';
import { approveWithKey } from './webauthn.js';

/** ladderFor names the interaction a risk level requires. */
export function ladderFor(risk) {
  switch (risk) {
    case 'medium': return 'chip';
    case 'high': return 'slide';
    case 'irreversible': return 'slide+auth';
    default: return 'tap';
  }
}

/**
 * confirmChip replaces host's content with "Confirm: label" and "Cancel"
 * chips and resolves once one is chosen.
 */
export function confirmChip(host, label) {
  return new Promise((resolve) => {
    const done = (ok) => { host.replaceChildren(); resolve(ok); };
    const yes = h('button', { type: 'button', class: 'chip chip-confirm', onclick: () => done(true) }, `Confirm: ${label}`);
    const no = h('button', { type: 'button', class: 'chip chip-cancel', onclick: () => done(false) }, 'Cancel');
    host.replaceChildren(h('div', { class: 'confirm-row', role: 'group', 'aria-label': 'Confirm this action' }, yes, no));
    yes.focus();
  });
}

// A slide needs the thumb dragged (or stepped with the arrow keys) all the
// way across: a tap anywhere on the track does nothing.
const SLIDE_DONE = 0.95;
const KEY_STEP = 0.1;

/** slideToConfirm shows a slider in host and resolves when it is slid home. */
export function slideToConfirm(host, label) {
  return new Promise((resolve) => {
    let value = 0;
    let dragging = null;
    const fill = h('div', { class: 'slide-fill' });
    const thumb = h('div', {
      class: 'slide-thumb', role: 'slider', tabindex: '0',
      'aria-label': `Slide to confirm: ${label}`, 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0',
      'aria-valuetext': 'not confirmed',
    }, '→');
    const track = h('div', { class: 'slide-track' }, fill, h('span', { class: 'slide-label', text: `Slide to ${label}` }), thumb);
    const cancel = h('button', { type: 'button', class: 'chip chip-cancel', onclick: () => finish(false) }, 'Cancel');
    host.replaceChildren(h('div', { class: 'slide-row' }, track, cancel));

    const set = (v) => {
      value = Math.max(0, Math.min(1, v));
      const travel = track.clientWidth - thumb.offsetWidth;
      thumb.style.setProperty('transform', `translateX(${value * travel}px)`);
      fill.style.setProperty('width', `${value * travel + thumb.offsetWidth}px`);
      thumb.setAttribute('aria-valuenow', String(Math.round(value * 100)));
      thumb.setAttribute('aria-valuetext', value >= SLIDE_DONE ? 'confirmed' : `${Math.round(value * 100)} percent`);
    };
    const finish = (ok) => { host.replaceChildren(); resolve(ok); };

    thumb.addEventListener('pointerdown', (e) => {
      dragging = { x: e.clientX, start: value };
      thumb.setPointerCapture(e.pointerId);
      e.preventDefault();
    });
    thumb.addEventListener('pointermove', (e) => {
      if (!dragging) return;
      const travel = Math.max(1, track.clientWidth - thumb.offsetWidth);
      set(dragging.start + (e.clientX - dragging.x) / travel);
    });
    const release = () => {
      if (!dragging) return;
      dragging = null;
      if (value >= SLIDE_DONE) finish(true);
      else set(0);
    };
    thumb.addEventListener('pointerup', release);
    thumb.addEventListener('pointercancel', () => { dragging = null; set(0); });
    thumb.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowRight' || e.key === 'ArrowUp') {
        set(value + KEY_STEP);
        if (value >= SLIDE_DONE) finish(true);
      } else if (e.key === 'ArrowLeft' || e.key === 'ArrowDown') {
        set(value - KEY_STEP);
      } else if (e.key === 'Escape') {
        finish(false);
      } else {
        return;
      }
      e.preventDefault();
    });
    set(0);
    thumb.focus();
  });
}

/**
 * ladderConfirmation is what an approving answer carries for the rung its
 * risk needs (the server refuses one without it): the slide for high, the
 * slide and a security key assertion over the server's challenge for this
 * card for irreversible, nothing below. It resolves to {confirmation}
 * (undefined below high) or {problem} saying what to do when the key step
 * failed.
 */
export async function ladderConfirmation(risk, token, requestId) {
  const ladder = ladderFor(risk);
  if (ladder === 'slide') return { confirmation: { method: 'slide' } };
  if (ladder !== 'slide+auth') return {};
  const r = await approveWithKey(token, requestId);
  if (r.problem) return r;
  return { confirmation: { method: 'webauthn', assertion: r.assertion } };
}
