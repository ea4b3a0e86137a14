// The Activity surface: the audit log told as a timeline (spec 0.5.1),
// read from GET /activity?before=&limit= with the owner's token, newest
// first, paged backwards with "Show earlier". What happened since the
// owner's previous visit comes first, as its own span ("what did you do
// while I slept"), with the rest of the timeline after it. It also shows
// this device's decision metrics (spec 0.5.6).

import { h, clear } from './dom.js';

const PAGE = 30;
const AWAY_PAGE = 200;
const AWAY_PAGES = 5; // at most 1000 entries in the span; the rest is under "Show earlier"

const EVENT_TEXT = {
  plan_proposed: 'Proposed a plan', approval_requested: 'Asked for your approval', approval_granted: 'You approved a plan',
  approval_declined: 'A plan was declined', execution_started: 'Started work', tool_call: 'Ran a tool',
  verification_passed: 'Checks passed', verification_failed: 'Checks failed', work_item_done: 'Finished a work item',
  work_item_failed: 'A work item failed', secret_stored: 'Stored a secret in the keyring', stream_started: 'Silas started',
};

export class Activity {
  constructor({ list, more, status, metrics, token, fatigue }) {
    Object.assign(this, { list, more, status, metrics, token, fatigue });
    this.before = '';
    this.loading = false;
    this.away = null; // the owner's previous visit, as recorded when the app opened
    this.visiting = null;
    this.refreshing = null;
    more.addEventListener('click', () => this.load());
  }

  /**
   * visit records that the owner is looking now (POST /activity/visit) and
   * keeps the previous visit for the "since your last visit" span. It
   * returns false when Silas could not be reached, to be tried again.
   */
  visit() {
    this.visiting = this.postVisit();
    return this.visiting;
  }

  async postVisit() {
    try {
      const res = await fetch('/activity/visit', {
        method: 'POST', cache: 'no-store', body: '{}',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.token()}` },
      });
      if (res.status === 404) return true; // an older server without visits
      if (!res.ok) return false;
      const body = await res.json();
      this.away = body.previous_visit || null;
      return true;
    } catch {
      return false;
    }
  }

  /** refresh reloads the span since the last visit and the newest page. */
  refresh() {
    if (!this.refreshing) this.refreshing = this.reload().finally(() => { this.refreshing = null; });
    return this.refreshing;
  }

  async reload() {
    await this.visiting; // the span needs the previous visit
    this.before = '';
    clear(this.list);
    this.renderMetrics();
    if (this.away) await this.loadAway();
    await this.load();
  }

  // loadAway shows every entry since the previous visit under its own
  // heading, then a heading for what came before; the timeline below it
  // continues from the oldest entry of the span.
  async loadAway() {
    const since = new Date(this.away);
    if (Number.isNaN(since.getTime())) return;
    this.loading = true;
    this.status.textContent = 'Loading…';
    const items = [];
    let before = '';
    try {
      for (let i = 0; i < AWAY_PAGES; i++) {
        // The server's own timestamp, to the nanosecond: a Date would round
        // it to the millisecond and let in entries from just before.
        const q = new URLSearchParams({ since: this.away, limit: String(AWAY_PAGE) });
        if (before) q.set('before', before);
        const res = await fetch(`/activity?${q}`, { headers: { Authorization: `Bearer ${this.token()}` }, cache: 'no-store' });
        if (!res.ok) return; // the plain timeline below still loads
        const body = await res.json();
        items.push(...(body.entries || []));
        if (body.next_before === null || body.next_before === undefined) break;
        before = String(body.next_before);
      }
    } catch {
      return;
    } finally {
      this.loading = false;
    }
    const when = since.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
    const n = items.length;
    this.list.append(h('li', { class: 'activity-span', id: 'activity-away' },
      h('h3', { text: `Since your last visit, ${when}` }),
      h('p', { class: 'muted', text: n === 0 ? 'Nothing happened while you were away.' : n === 1 ? 'One thing happened while you were away.' : `${n} things happened while you were away.` })));
    for (const it of items) this.list.append(entry(it, 'away'));
    this.list.append(h('li', { class: 'activity-span' }, h('h3', { text: 'Before that' })));
    const seqs = items.map((it) => it.seq).filter(Number.isFinite);
    if (seqs.length) this.before = String(Math.min(...seqs));
  }

  async load() {
    if (this.loading) return;
    this.loading = true;
    this.status.textContent = 'Loading…';
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (this.before) q.set('before', this.before);
    try {
      const res = await fetch(`/activity?${q}`, { headers: { Authorization: `Bearer ${this.token()}` }, cache: 'no-store' });
      if (res.status === 404) { this.status.textContent = 'The activity log is not available on this server yet.'; this.more.hidden = true; return; }
      if (!res.ok) { this.status.textContent = `Could not load activity (HTTP ${res.status}); try again later.`; return; }
      const body = await res.json();
      const items = Array.isArray(body) ? body : body.entries || [];
      for (const it of items) this.list.append(entry(it, 'earlier'));
      const next = Array.isArray(body) ? null : body.next_before;
      this.before = next === null || next === undefined ? '' : String(next);
      this.more.hidden = items.length < PAGE || !this.before;
      this.status.textContent = this.list.querySelector('.activity-item') ? '' : 'Nothing has happened yet.';
    } catch {
      this.status.textContent = 'Could not reach Silas to load the activity.';
    } finally {
      this.loading = false;
    }
  }

  renderMetrics() {
    const m = this.fatigue.summary();
    const pct = (x) => (x === null ? '–' : `${Math.round(x * 100)}%`);
    const sec = (x) => (x ? `${x.toFixed(1)} s` : '–');
    clear(this.metrics).append(
      h('div', {}, h('dt', { text: 'Decisions' }), h('dd', { text: String(m.decisions) })),
      h('div', {}, h('dt', { text: 'Median time, low' }), h('dd', { text: sec(m.medianLowS) })),
      h('div', {}, h('dt', { text: 'Median time, medium' }), h('dd', { text: sec(m.medianMediumS) })),
      h('div', {}, h('dt', { text: 'Declined' }), h('dd', { text: pct(m.declineRate) })),
      h('div', {}, h('dt', { text: 'Undone' }), h('dd', { text: pct(m.undoRate) })),
      h('div', {}, h('dt', { text: 'Free text' }), h('dd', { text: pct(m.freetextRate) })));
  }
}

function entry(it, span) {
  const when = it.time || it.timestamp || it.at;
  const d = when ? new Date(when) : null;
  const text = it.title || it.summary || it.text || EVENT_TEXT[it.event] || String(it.event || 'Event').replace(/_/g, ' ');
  return h('li', { class: 'activity-item', dataset: { event: it.event || '', span } },
    d && !Number.isNaN(d.getTime()) ? h('time', { datetime: d.toISOString(), text: d.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' }) }) : null,
    h('span', { class: 'activity-text', text }),
    it.detail ? h('span', { class: 'activity-detail muted', text: it.detail }) : null);
}
