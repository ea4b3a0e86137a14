// The full contents of a plan card: every field the approval token signs
// (the approval_request's plan, spec 3.3), so that the owner approves
// nothing they were not shown. Empty fields are left out; fields this app
// does not know yet are still shown, under their JSON name; a project's
// tasks follow, each with its own fields. Text only, through h().

import { h } from './dom.js';
import { render } from './markdown.js';

/** The plan's fields in the order shown, with their labels. */
const FIELDS = [
  ['body', 'Briefing'], ['id', 'Work item'], ['type', 'Type'], ['title', 'Title'], ['agent', 'Agent'],
  ['interaction_mode', 'Interaction mode'], ['budget', 'Budget'], ['verify', 'Verification checks'],
  ['gates', 'Gates'], ['skills', 'Skills'], ['skill_hashes', 'Skill hashes (as approved at install)'], ['access_levels', 'Access levels'], ['escalation', 'Escalation'],
  ['input_artifacts_from', 'Input artifacts from'], ['follow_up_of', 'Follow-up of'], ['parent', 'Parent'],
  ['spawned_by', 'Spawned by'], ['domain', 'Domain'], ['schedule', 'Schedule'], ['on_failure', 'On failure'],
  ['on_stuck', 'On stuck'], ['failure_context', 'Failure context'], ['tasks', 'Tasks'], ['depends_on', 'Depends on'],
  ['outputs', 'Outputs'],
  ['plan_hash', 'Plan hash'],
];
const LABEL = Object.fromEntries(FIELDS);

/** Labels of the fields inside checks, gates, access levels and escalations. */
const INNER = {
  name: 'Name', run: 'Command', expect: 'Expects', timeout: 'Timeout (s)', network: 'Network', on: 'On',
  after_step: 'After step', provider: 'Provider', type: 'Type', check: 'Check', config: 'Config', extract: 'Extract',
  auto_approve: 'Auto-approve', require_approval: 'Require approval', block: 'Block', allowed_values: 'Allowed values',
  approval_values: 'Approval values', on_block: 'On block', check_command: 'Check command', check_expect: 'Check expects',
  promote_to_policy: 'Promote to policy', description: 'Description', tools: 'Tools', requires: 'Requires',
  expires_after: 'Expires after (s)', action: 'Action', queue: 'Queue', message: 'Message', instruction: 'Instruction',
  fallback: 'Fallback', max_retries: 'Max retries', exit_code: 'Exit code', equals: 'Equals', contains: 'Contains',
  regex: 'Regex', output_lt: 'Output below', output_gt: 'Output above', file_exists: 'File exists', not_empty: 'Not empty',
  min: 'Min', max: 'Max', outside: 'Outside',
};

/** Fields inside those that are maps of names (a gate's config). */
const NAMED = new Set(['config']);

// Bidirectional and other invisible controls would let plan text reorder
// or hide itself; they are shown as visible code points instead.
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const visible = (s) => String(s).replace(HIDDEN, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);

const isEmpty = (v) => v === null || v === undefined || v === '' || v === false ||
  (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

/** budgetText spells out every limit, exactly as signed. */
export function budgetText(b) {
  if (!b) return '';
  return [`${b.max_tokens} tokens`, `$${b.max_cost_usd}`, `${b.max_wall_time_seconds} s wall time`,
    `${b.max_attempts} attempts`, `${b.max_planner_calls} planner calls`].join(' · ');
}

// show renders any JSON value: scalars as text, lists of scalars joined,
// lists of objects as a list, objects as a definition list whose keys are
// labelled when they are known fields (labels) and shown verbatim when they
// are names (an access level's, an escalation's, a config key).
function show(v, labels = INNER) {
  if (isEmpty(v)) return null;
  if (typeof v !== 'object') return visible(v);
  if (Array.isArray(v)) {
    if (v.every((x) => x === null || typeof x !== 'object')) return visible(v.join(', '));
    return h('ul', { class: 'plan-list' }, v.map((x) => h('li', {}, show(x, labels))));
  }
  return h('dl', { class: 'kv plan-kv' }, Object.entries(v).filter(([, x]) => !isEmpty(x))
    .map(([k, x]) => [h('dt', { text: visible(labels?.[k] || k) }), h('dd', {}, show(x, labels !== null && NAMED.has(k) ? null : INNER))]));
}

// value renders one top-level field of a plan.
function value(key, v) {
  switch (key) {
    case 'body': return h('div', { class: 'md' }, render(visible(v)));
    case 'budget': return budgetText(v);
    // A check's network access is shown either way: it is what makes a
    // plan high risk.
    case 'verify': return show(v.map((c) => ({ ...c, network: c.network ? 'yes' : 'no' })));
    // Access levels and escalations are maps of names to objects.
    case 'access_levels': case 'escalation': return show(v, null);
    default: return show(v);
  }
}

/**
 * planFields returns every non-empty field of plan as a definition list
 * (data-field names each row), then one section per task of a project.
 */
export function planFields(plan) {
  if (!plan || typeof plan !== 'object') return null;
  const keys = [...FIELDS.map(([k]) => k), ...Object.keys(plan).filter((k) => !(k in LABEL) && k !== 'task_plans').sort()];
  const rows = keys.filter((k) => !isEmpty(plan[k])).map((k) => h('div', { class: 'plan-field', dataset: { field: k } },
    h('dt', { text: LABEL[k] || k }), h('dd', {}, value(k, plan[k]))));
  const tasks = Array.isArray(plan.task_plans) ? plan.task_plans : [];
  return [
    h('dl', { class: 'plan-fields' }, rows),
    tasks.map((t, i) => h('section', { class: 'plan-task', dataset: { task: t.id } },
      h('h5', { text: visible(`Task ${i + 1} of ${tasks.length}: ${t.title || t.id}`) }), planFields(t))),
  ];
}

/** planSummary is the short line of what a plan may touch beyond its checks. */
export function planSummary(plan) {
  if (!plan) return '';
  const parts = [];
  const gates = plan.gates || [];
  if (gates.length) parts.push(`${gates.length} gate${gates.length === 1 ? '' : 's'}`);
  if ((plan.verify || []).some((c) => c.network)) parts.push('network access');
  const tasks = plan.task_plans || [];
  if (tasks.length) parts.push(`${tasks.length} task${tasks.length === 1 ? '' : 's'}`);
  return parts.join(' · ');
}
