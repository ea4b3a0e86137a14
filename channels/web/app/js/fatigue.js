// Approval cadence (spec 0.5.4 item 3) and the decision metrics of spec
// 0.5.6 as this device sees them. Decision time is measured from the card
// becoming active to the answer; nothing here ever delays a decision.

import { store } from './store.js';

const WINDOW = 10; // rolling window of medium+ decisions
const MIN_SAMPLES = 3;
const TOO_FAST_MS = 1000;

const median = (xs) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// Card kinds as the server's /ux/metrics names them.
const CARD_TYPE = {
  plan: 'plan_approval', gate: 'gate_approval', checkpoint: 'checkpoint', batch: 'batch_review', draft: 'draft_review',
  decision: 'decision', suggestion: 'suggestion', autonomy: 'autonomy_threshold_review', secure: 'secure_input',
  setup: 'connection_setup', connect: 'connection_approval', skill: 'skill_install', permission: 'permission_escalation', failure: 'connection_failure', post: 'post_execution',
};

export class Fatigue {
  /** report(metrics) sends metrics to the audit log; it may fail silently. */
  constructor(report = () => {}) {
    this.log = store.decisions();
    this.report = report;
  }

  record(card, ms, { declined, freetext, undo, verdict }) {
    const risk = card.risk;
    const wasFast = this.tooFast();
    this.log.push({ risk, ms: Math.round(ms), declined, freetext, undo, at: Date.now() });
    store.setDecisions(this.log);
    const base = { card_type: CARD_TYPE[card.kind], request_id: String(card.id).slice(0, 128), at: new Date().toISOString() };
    if (risk) base.risk_level = risk;
    if (verdict && /^[a-z_]{1,32}$/.test(verdict)) base.verdict = verdict;
    const metrics = [{ metric: 'decision_time', value: Math.min(Math.round(ms), 3600000), ...base }];
    if (declined) metrics.push({ metric: 'decline', ...base });
    if (freetext) metrics.push({ metric: 'freetext', ...base });
    if (undo) metrics.push({ metric: 'undo', ...base });
    if (!wasFast && this.tooFast()) metrics.push({ metric: 'approval_fatigue', ...base });
    this.report(metrics);
  }

  /** tooFast: the median time of recent medium+ decisions is under 1 s. */
  tooFast() {
    const recent = this.log.filter((d) => d.risk && d.risk !== 'low').slice(-WINDOW);
    return recent.length >= MIN_SAMPLES && median(recent.map((d) => d.ms)) < TOO_FAST_MS;
  }

  /** summary returns the spec 0.5.6 metrics over the stored decisions. */
  summary() {
    const by = (r) => this.log.filter((d) => d.risk === r).map((d) => d.ms);
    const n = this.log.length;
    return {
      decisions: n,
      medianLowS: median(by('low')) / 1000,
      medianMediumS: median(by('medium')) / 1000,
      declineRate: n ? this.log.filter((d) => d.declined).length / n : null,
      undoRate: n ? this.log.filter((d) => d.undo).length / n : null,
      freetextRate: n ? this.log.filter((d) => d.freetext).length / n : null,
    };
  }
}
