// The owner's scheduled goals on the Activity surface (spec 5.2.3): what
// Silas checks on a schedule, read from GET /goals with the owner's token,
// each with Pause or Resume (POST /goals/{id}/pause|resume). Removing a
// goal is left to chat (/goal remove <id>) and `silas goals remove`. The
// box stays hidden on a server without goals (404) or without plan
// execution (503).

import { h, clear } from './dom.js';

export class Goals {
  constructor({ root, list, status, token, toast }) {
    Object.assign(this, { root, list, status, token, toast });
    this.loading = null;
  }

  /** refresh reloads the list; concurrent calls share one request. */
  refresh() {
    if (!this.loading) this.loading = this.load().finally(() => { this.loading = null; });
    return this.loading;
  }

  async load() {
    try {
      const res = await fetch('/goals', { cache: 'no-store', headers: { Authorization: `Bearer ${this.token()}` } });
      if (res.status === 404 || res.status === 503) { this.root.hidden = true; return; }
      this.root.hidden = false;
      if (!res.ok) { this.status.textContent = `Could not load your goals (HTTP ${res.status}); try again later.`; return; }
      const body = await res.json();
      this.render(Array.isArray(body.goals) ? body.goals : []);
    } catch {
      if (!this.root.hidden) this.status.textContent = 'Could not reach Silas to load your goals.';
    }
  }

  render(goals) {
    clear(this.list);
    this.status.textContent = goals.length ? '' : 'No scheduled goals. Ask Silas to keep an eye on something; it proposes a goal for you to approve.';
    for (const g of goals) this.list.append(this.item(g));
  }

  item(g) {
    const paused = g.status === 'paused';
    const action = paused ? 'resume' : 'pause';
    const btn = h('button', { type: 'button', class: 'btn btn-alt goal-action', dataset: { action }, 'aria-label': `${paused ? 'Resume' : 'Pause'} ${g.title}` },
      paused ? 'Resume' : 'Pause');
    btn.addEventListener('click', () => this.change(g, action, btn));
    return h('li', { class: 'goal-item', dataset: { goalId: g.id, status: g.status } },
      h('div', { class: 'goal-head' },
        h('span', { class: 'goal-title', text: g.title || g.id }),
        h('span', { class: 'goal-state', text: paused ? 'Paused' : 'Active' })),
      h('div', { class: 'goal-meta muted', text: meta(g) }),
      btn);
  }

  async change(g, action, btn) {
    btn.disabled = true;
    try {
      const res = await fetch(`/goals/${encodeURIComponent(g.id)}/${action}`, {
        method: 'POST', cache: 'no-store', headers: { Authorization: `Bearer ${this.token()}` },
      });
      const body = await res.json().catch(() => ({}));
      if (!res.ok) {
        this.toast(body.message || `Could not ${action} the goal (HTTP ${res.status}).`);
        if (res.status === 404) this.refresh(); else btn.disabled = false;
        return;
      }
      const li = this.list.querySelector(`[data-goal-id="${CSS.escape(g.id)}"]`);
      if (li) li.replaceWith(this.item(body));
      this.toast(action === 'pause' ? `Paused “${body.title}”: nothing runs until you resume it.` : `Resumed “${body.title}”.`);
    } catch {
      this.toast('Could not reach Silas; try again.');
      btn.disabled = false;
    }
  }
}

// meta is one line about a goal: its schedule, the next and last check and
// what its standing approval has left.
function meta(g) {
  const parts = [g.schedule];
  const at = (ts) => new Date(ts).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' });
  if (g.source === 'config') parts.push('from the config file');
  if (g.next_run) parts.push(`next check ${at(g.next_run)}`);
  if (g.last_outcome) parts.push(`last check: ${g.last_outcome}`);
  if (g.standing) parts.push(`standing approval: ${g.standing.executions_used} of ${g.standing.max_executions} fix tasks used`);
  else parts.push('no standing approval: a failing check asks you');
  return parts.join(' · ');
}
