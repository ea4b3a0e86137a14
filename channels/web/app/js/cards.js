// Card contract (spec 0.5.3): every server event that asks the owner for a
// decision becomes a card with an intent, a risk level, a rationale,
// consequence-labelled CTAs in the enforced order (recommended, safe
// alternatives, decline/destructive last) and optional details. Cards are
// plain data (the server event plus local state) so that they survive a
// reload; describe() derives what to show.

import { h } from './dom.js';
import { render, plain } from './markdown.js';
import { planFields, planSummary } from './plan.js';
import { skillFields, skillSummary } from './skill.js';

/** Server event types that become cards, and the frame that answers each. */
export const CARD_EVENTS = {
  // A plan card expires at the server's expires_at (its configured
  // request timeout), not at a guess of it.
  approval_request: { kind: 'plan', answer: 'approval_response' },
  gate_approval: { kind: 'gate', answer: 'gate_response', timeoutS: 120 },
  checkpoint: { kind: 'checkpoint', answer: 'checkpoint' },
  batch_review: { kind: 'batch', answer: 'batch_review_response' },
  draft_review: { kind: 'draft', answer: 'draft_review_response' },
  decision: { kind: 'decision', answer: 'decision_response' },
  suggestion: { kind: 'suggestion', answer: 'suggestion_response' },
  autonomy_threshold_review: { kind: 'autonomy', answer: 'autonomy_threshold_response' },
  secure_input_request: { kind: 'secure', answer: 'secure_input_completed' },
  connection_setup_step: { kind: 'setup', answer: 'connection_setup_response' },
  permission_escalation: { kind: 'permission', answer: 'permission_escalation_response' },
  connection_failure: { kind: 'failure', answer: 'connection_failure_response' },
};

/** ANSWER_TYPES are the client frames that answer cards. */
export const ANSWER_TYPES = new Set(Object.values(CARD_EVENTS).map((c) => c.answer));

export const RISKS = ['low', 'medium', 'high', 'irreversible'];
const RISK_LABEL = { low: 'Low risk', medium: 'Medium risk', high: 'High risk', irreversible: 'Irreversible' };
export const riskLabel = (r) => RISK_LABEL[r] || 'No risk level';
export const atLeastMedium = (r) => RISKS.indexOf(r) >= 1;

const capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const validRisk = (r) => (RISKS.includes(r) ? r : null);

/**
 * riskOf assigns a card's risk level deterministically from what the
 * action does (spec 0.5.2): an explicit risk_level from the server wins;
 * otherwise the card type sets it, and a plan whose checks need the
 * network, or whose budget is large, is high.
 */
export function riskOf(kind, ev) {
  const explicit = validRisk(ev.risk_level) || validRisk(ev.proposal?.risk_level) || validRisk(ev.suggestion?.risk_level);
  if (explicit) return explicit;
  switch (kind) {
    case 'plan': {
      const tasks = ev.plan?.task_plans || [];
      const network = [ev.verify || [], ...tasks.map((t) => t.verify || [])].some((checks) => checks.some((c) => c.network));
      const b = ev.budget || {};
      return network || b.max_cost_usd > 5 || b.max_wall_time_seconds > 3600 ? 'high' : 'medium';
    }
    // Installing a skill installs code that work items run.
    case 'skill': return 'high';
    case 'batch': case 'draft': case 'autonomy': case 'permission': return 'medium';
    case 'secure': return null;
    default: return 'low';
  }
}

/** fromEvent returns a new card for a server event, or null. */
export function fromEvent(ev, now = Date.now()) {
  const spec = CARD_EVENTS[ev.type];
  if (!spec) return null;
  const id = ev.request_id || ev.ref_id || ev.request?.ref_id;
  if (!id) return null;
  if (ev.type === 'connection_setup_step' && !['device_code', 'browser_redirect', 'completion', 'failure'].includes(ev.step_type)) return null;
  const serverExpiry = ev.expires_at ? Date.parse(ev.expires_at) || null : null;
  // A skill's install card is an approval_request of scope skill_install.
  let kind = spec.kind;
  if (ev.type === 'approval_request' && ev.scope === 'skill_install') kind = 'skill';
  if (ev.type === 'approval_request' && ev.scope === 'connection_manage') kind = 'connect';
  return {
    id, kind, answerType: spec.answer, ev,
    risk: riskOf(kind, ev),
    receivedAt: now,
    expiresAt: serverExpiry ?? (spec.timeoutS ? now + spec.timeoutS * 1000 : null),
    state: 'pending',
  };
}

/** postExecution returns the results card of a finished work item. */
export function postExecution(status, plan, now = Date.now()) {
  return {
    id: 'post-' + status.work_item_id, kind: 'post', answerType: null, risk: 'low', receivedAt: now, state: 'pending',
    ev: { ...status, title: plan?.title || status.work_item_id, verify: plan?.verify || [], failures: status.failures || [] },
    expiresAt: status.undo_until ? Date.parse(status.undo_until) || null : null,
  };
}

// cta builds one call to action. tone: primary (recommended), alt (a safe
// alternative), decline (safe: nothing runs) or destructive.
const cta = (label, tone, answer, extra = {}) => ({ label, tone, answer, ...extra });
const TONE_ORDER = { primary: 0, alt: 1, decline: 2, destructive: 2 };

/** ordered enforces the CTA order of the card contract. */
export function ordered(ctas) {
  return ctas.map((c, i) => ({ c, i })).sort((a, b) => TONE_ORDER[a.c.tone] - TONE_ORDER[b.c.tone] || a.i - b.i).map((x) => x.c);
}

// sentences returns the first n sentences of markdown text, as plain text.
// A sentence ends at . ! or ? before a capital letter or the end, so
// "hello.txt" does not end one.
const sentences = (text, n = 2) => plain(text).split(/(?<=[.!?])\s+(?=[A-Z0-9"'(])/).slice(0, n).join(' ').slice(0, 240);

const optionList = (opts) => (opts || []).map((o) => (typeof o === 'string' ? { label: o, value: o } : { label: o.label ?? String(o.value), value: o.value ?? o.label, risk: o.risk_level }));

function checksList(checks, failures = [], passedAll = null) {
  if (!checks?.length) return h('p', { class: 'muted', text: 'No verification checks.' });
  return h('ul', { class: 'checks' }, checks.map((c) => {
    let mark = null;
    if (passedAll !== null) {
      const failed = !passedAll && (failures.length === 0 || failures.some((f) => f.includes(c.name)));
      mark = h('span', { class: failed ? 'check-fail' : 'check-pass', text: failed ? '✗ failed' : '✓ passed' });
    }
    return h('li', { dataset: { check: c.name } }, h('strong', { text: c.name }), ' ', mark, c.run ? h('code', { class: 'check-run', text: c.run }) : null);
  }));
}

function budgetLine(b) {
  if (!b) return '';
  const parts = [];
  if (b.max_attempts) parts.push(`${b.max_attempts} attempts`);
  if (b.max_cost_usd) parts.push(`$${Number(b.max_cost_usd).toFixed(2)}`);
  if (b.max_wall_time_seconds) parts.push(`${Math.round(b.max_wall_time_seconds / 60)} min`);
  if (b.max_tokens) parts.push(`${Math.round(b.max_tokens / 1000)}k tokens`);
  return parts.join(' · ');
}

function kv(rows) {
  return h('dl', { class: 'kv' }, rows.filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => [h('dt', { text: k }), h('dd', {}, v instanceof Node ? v : String(v))]));
}

/**
 * describe returns what a card shows: intent, rationale, affected, ctas
 * (in enforced order), details(), and optional input() for the card's own
 * controls (checkboxes, free text, an editor).
 */
export function describe(card) {
  const ev = card.ev;
  const d = DESCRIBE[card.kind]?.(ev, card) || { intent: 'A decision is waiting', rationale: '', ctas: [] };
  d.ctas = ordered(d.ctas || []);
  return d;
}

const DESCRIBE = {
  plan(ev) {
    const checks = ev.verify || [];
    const extra = planSummary(ev.plan);
    return {
      label: 'Plan approval',
      intent: ev.title || 'Run a plan',
      rationale: sentences(ev.body) || 'Silas wrote a plan for your request.',
      affected: `${checks.length} check${checks.length === 1 ? '' : 's'}: ${checks.map((c) => c.name).join(', ') || 'none'} · budget ${budgetLine(ev.budget)}${extra ? ' · ' + extra : ''}`,
      ctas: [
        cta('Approve + run plan', 'primary', { verdict: 'approved' }),
        cta('Decline, run nothing', 'decline', { verdict: 'declined' }, { safe: true }),
      ],
      // With the event's plan the details show every field the approval
      // signs; a server that sends only spec 8.1's fields gets those.
      details: () => (ev.plan ? [h('h4', { text: 'Everything this approval signs' }), planFields(ev.plan)] : [
        h('h4', { text: 'Plan' }), h('div', { class: 'md' }, render(ev.body)),
        h('h4', { text: 'Verification checks' }), checksList(checks),
        h('h4', { text: 'Budget' }), h('p', { text: budgetLine(ev.budget) || 'default' }),
      ]),
    };
  },
  connect(ev) {
    const c = ev.connection || {};
    return {
      label: 'Connection',
      intent: ev.title || `Connect ${c.name || 'a service'}`,
      rationale: ev.body || '',
      affected: [c.skill_name && `skill ${c.skill_name}`, c.auth_strategy && c.auth_strategy.replace('_', ' '),
        (c.requested_scopes || []).length ? `asks for ${c.requested_scopes.join(', ')}` : null].filter(Boolean).join(' · '),
      ctas: [
        cta('Approve + connect', 'primary', { verdict: 'approved' }),
        cta('Decline, connect nothing', 'decline', { verdict: 'declined' }, { safe: true }),
      ],
      details: () => kv([['Connection', c.connection_id], ['Silas may', (c.permissions || []).join(', ')], ['Service scopes', (c.requested_scopes || []).join(', ')]]),
    };
  },
  skill(ev) {
    const s = ev.skill || {};
    const imported = s.origin === 'imported';
    return {
      label: imported ? 'Skill import' : 'Skill install',
      intent: ev.title || `Install skill ${s.name || ''}`,
      rationale: s.description || sentences(ev.body) || 'A skill asks to be installed.',
      affected: skillSummary(s),
      ctas: [
        cta(imported ? 'Approve + import skill' : 'Approve + install skill', 'primary', { verdict: 'approved' }),
        cta('Decline, install nothing', 'decline', { verdict: 'declined' }, { safe: true }),
      ],
      // Everything the approval installs: SKILL.md, every script, the reports.
      details: () => skillFields(s),
    };
  },
  gate(ev) {
    return {
      label: 'Gate',
      intent: `Gate "${ev.gate_name || 'policy'}" wants your call`,
      rationale: typeof ev.context === 'string' ? sentences(ev.context) : 'A policy gate flagged this turn and needs your approval to continue.',
      ctas: [cta('Allow and continue', 'primary', { verdict: 'approve' }), cta('Block it', 'decline', { verdict: 'block' }, { safe: true })],
      details: () => [kv([['Gate', ev.gate_name], ['Value', typeof ev.value === 'string' ? ev.value : JSON.stringify(ev.value)]]),
        ev.context && typeof ev.context !== 'string' ? h('pre', { text: JSON.stringify(ev.context, null, 2) }) : null],
    };
  },
  checkpoint(ev) {
    const opts = optionList(ev.options);
    return {
      label: 'Checkpoint',
      intent: sentences(ev.message, 1) || 'Checkpoint',
      rationale: sentences(ev.message) || 'Silas paused at a checkpoint.',
      ctas: opts.length ? opts.map((o, i) => cta(o.label, i === 0 ? 'primary' : 'alt', { verdict: o.value })) :
        [cta('Continue', 'primary', { verdict: 'continue' }), cta('Stop here', 'decline', { verdict: 'stop' }, { safe: true })],
      details: () => h('div', { class: 'md' }, render(ev.message)),
    };
  },
  batch(ev) {
    const b = ev.batch || {};
    const items = b.items || [];
    const threshold = typeof b.confidence_threshold === 'number' ? b.confidence_threshold : 0.8;
    const anomalous = (it) => it.anomaly === true || (typeof it.confidence === 'number' && it.confidence < threshold);
    const flagged = items.filter(anomalous).length;
    return {
      label: 'Batch review',
      intent: capitalize(`${b.action || 'act on'} ${items.length} item${items.length === 1 ? '' : 's'}`),
      rationale: sentences(b.reason_summary) || 'These items match the goal.',
      affected: flagged ? `${flagged} item${flagged === 1 ? '' : 's'} look different and are left unchecked` : `${items.length} items, all matching the usual pattern`,
      ctas: [
        cta(capitalize(`${b.action || 'approve'} checked items`), 'primary', { verdict: 'approve' }, { selection: true }),
        cta('Decline batch', 'decline', { verdict: 'decline' }, { safe: true }),
      ],
      input: () => h('fieldset', { class: 'batch-items' }, h('legend', { text: 'Items (uncheck to leave one out)' }), items.map((it) => {
        const odd = anomalous(it);
        const box = h('input', { type: 'checkbox', value: it.item_id, checked: !odd, id: `bi-${it.item_id}` });
        return h('label', { class: odd ? 'batch-item anomaly' : 'batch-item', for: `bi-${it.item_id}` }, box,
          h('span', {}, h('strong', { text: it.title || it.item_id }), h('small', { text: ` ${it.actor || ''} ${it.reason || ''}` }),
            odd ? h('span', { class: 'badge risk-high', text: 'unusual' }) : null));
      })),
      details: () => kv([['Action', b.action], ['Lowest confidence', b.confidence_min], ['Batch', b.batch_id]]),
    };
  },
  draft(ev) {
    return {
      label: 'Draft review',
      intent: 'Review a draft before it goes out',
      rationale: sentences(typeof ev.context === 'string' ? ev.context : ev.metadata?.reason) || 'Silas drafted this for you.',
      ctas: [
        cta('Approve + send', 'primary', { verdict: 'approve' }),
        cta('Send my edit', 'alt', { verdict: 'edit' }, { edit: true }),
        cta('Rephrase it', 'alt', { verdict: 'rephrase' }, { safe: true }),
        cta('Reject draft', 'decline', { verdict: 'reject' }, { safe: true }),
      ],
      input: () => h('label', { class: 'field' }, h('span', { text: 'Draft (edit to change it)' }),
        h('textarea', { class: 'draft-text', rows: '4', value: ev.draft || '' })),
      details: () => [h('div', { class: 'md' }, render(typeof ev.context === 'string' ? ev.context : JSON.stringify(ev.context ?? ''))),
        ev.metadata ? h('pre', { text: JSON.stringify(ev.metadata, null, 2) }) : null],
    };
  },
  decision(ev) {
    const opts = optionList(ev.options);
    return {
      label: 'Decision',
      intent: sentences(ev.question, 1) || 'Silas needs a decision',
      rationale: sentences(ev.rationale || ev.question) || '',
      ctas: opts.map((o, i) => cta(o.label, i === 0 ? 'primary' : 'alt', { selected_value: o.value }, { freetext: true })),
      input: ev.allow_freetext !== false ? () => h('label', { class: 'field' }, h('span', { text: 'Or say it in your words (optional)' }),
        h('input', { type: 'text', class: 'freetext', autocomplete: 'off' })) : null,
      details: () => h('div', { class: 'md' }, render(ev.question)),
    };
  },
  suggestion(ev) {
    const s = ev.suggestion || {};
    return {
      label: 'Suggestion',
      intent: s.intent || 'A suggestion',
      rationale: s.rationale || '',
      ctas: [cta('Do it', 'primary', { selected_value: 'accept' }), cta('Later', 'alt', { selected_value: 'defer' }, { safe: true }),
        cta('Not interested', 'decline', { selected_value: 'dismiss' }, { safe: true })],
      details: () => kv([['Source', s.source], ['Work item', s.proposed_work_item_id]]),
    };
  },
  autonomy(ev) {
    const p = ev.proposal || {};
    const changes = p.changes || [];
    return {
      label: 'Autonomy threshold',
      intent: changes.map((c) => `${c.direction === 'tighten' ? 'Tighten' : 'Widen'} ${c.key}: ${c.current_value} → ${c.proposed_value}`).join('; ') || 'Change an autonomy threshold',
      rationale: p.rationale || '',
      affected: `Evidence: ${p.sample_size ?? '?'} decisions, ${Math.round((p.correction_rate ?? 0) * 100)}% corrected, ${p.evidence_window || ''}`,
      ctas: [cta('Approve change', 'primary', { verdict: 'approve' }), cta('Tighten now', 'alt', { verdict: 'tighten_now' }, { safe: true }),
        cta('Keep as is', 'decline', { verdict: 'decline' }, { safe: true })],
      details: () => h('ul', {}, changes.map((c) => h('li', { text: `${c.key}: ${c.current_value} → ${c.proposed_value} (${c.direction})` }))),
    };
  },
  permission(ev) {
    return {
      label: 'Permission',
      intent: `Give ${ev.connection_name || 'a connection'} more access`,
      rationale: ev.reason || '',
      ctas: [cta('Approve access', 'primary', { verdict: 'approve' }), cta('Just this once', 'alt', { verdict: 'just_this_once' }),
        cta('Deny', 'decline', { verdict: 'deny' }, { safe: true })],
      details: () => kv([['Now', (ev.current_permissions || []).join(', ')], ['Asked for', (ev.requested_permissions || []).join(', ')]]),
    };
  },
  failure(ev) {
    const opts = (ev.recovery_options || []).filter((o) => o.action !== 'skip');
    return {
      label: 'Connection problem',
      intent: `${ev.service || 'A connection'}: ${ev.failure_type || 'failed'}`,
      rationale: ev.message || '',
      ctas: [...opts.map((o, i) => cta(o.label, i === 0 ? 'primary' : 'alt', { selected_action: o.action })),
        cta('Skip', 'decline', { selected_action: 'skip' }, { safe: true })],
      details: () => h('ul', {}, opts.map((o) => h('li', { text: `${o.label}: ${o.description || ''}` }))),
    };
  },
  setup(ev) {
    if (ev.step_type === 'device_code') {
      return {
        label: 'Connect',
        intent: `Enter code ${ev.user_code} on the service's page`,
        rationale: 'Open the link, sign in and type the code. Silas never sees your password.',
        affected: ev.verification_url ? h('a', { href: ev.verification_url, target: '_blank', rel: 'noopener noreferrer', text: ev.verification_url }) : null,
        ctas: [cta("I've done it", 'primary', { step_type: ev.step_type, action: 'done' }), cta('Having trouble', 'alt', { step_type: ev.step_type, action: 'trouble' }, { safe: true }),
          cta('Cancel', 'decline', { step_type: ev.step_type, action: 'cancel' }, { safe: true })],
      };
    }
    return {
      label: 'Connect',
      intent: ev.step_type === 'completion' ? (ev.summary || 'Connection ready') : 'Sign in in your browser',
      rationale: ev.step_type === 'browser_redirect' ? `Silas is waiting for the sign-in on ${ev.listening_on || 'this machine'}.` : (ev.permissions_granted || []).join(', '),
      affected: ev.auth_url ? h('a', { href: ev.auth_url, target: '_blank', rel: 'noopener noreferrer', text: 'Open the sign-in page' }) : null,
      ctas: ev.step_type === 'completion' ? [cta('Done', 'primary', { step_type: ev.step_type, action: 'done' })] :
        [cta('Having trouble', 'alt', { step_type: ev.step_type, action: 'trouble' }, { safe: true }), cta('Cancel', 'decline', { step_type: ev.step_type, action: 'cancel' }, { safe: true })],
    };
  },
  post(ev, card) {
    const ok = ev.status === 'done';
    const undoOpen = ev.undo_request_id && card.expiresAt && card.expiresAt > Date.now();
    return {
      label: 'Results',
      intent: `${ev.title}: ${ok ? 'done' : ev.status}`,
      rationale: ev.detail || (ok ? 'The work item finished and its checks passed.' : 'The work item did not finish.'),
      affected: h('div', { class: 'results' }, h('span', { text: `Verification after ${ev.attempt || 1} attempt${ev.attempt === 1 ? '' : 's'}:` }), checksList(ev.verify, ev.failures, ok)),
      ctas: [
        ...(undoOpen ? [cta(`Undo (until ${new Date(card.expiresAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })})`, 'alt', { selected_value: 'undo' }, { undo: true, safe: true })] : []),
        cta('Got it', 'primary', null, { local: true, safe: true }),
      ],
    };
  },
  secure(ev) {
    const r = ev.request || ev;
    return {
      label: 'Secure input',
      intent: r.label || 'Enter a secret',
      rationale: r.guidance?.instructions || 'This goes straight to your keyring. Silas only ever sees that it was stored.',
      secure: true,
      ctas: [],
    };
  },
};
