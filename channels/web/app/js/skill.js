// The full contents of a skill_install card (spec 10.4, 10.4.1): what the
// owner approves when a skill is installed or imported. SKILL.md and every
// script are shown as exact text (never rendered as markdown, so nothing in
// them can hide itself), then the validation report, what an import
// changed, the dry runs that follow the approval and every file with its
// hash. Text only, through h().

import { h } from './dom.js';

// Bidirectional and other invisible controls would let skill text reorder
// or hide itself; they are shown as visible code points instead.
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;
const visible = (s) => String(s ?? '').replace(HIDDEN, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);

const short = (hash) => String(hash || '').slice(0, 12);
const plural = (n, one, many = one + 's') => `${n} ${n === 1 ? one : many}`;

function kv(rows) {
  return h('dl', { class: 'kv' }, rows.filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [h('dt', { text: k }), h('dd', {}, v instanceof Node ? v : visible(v))]));
}

function code(text, cls, path) {
  return h('pre', { class: `skill-code ${cls}`, dataset: path ? { path } : {}, text: visible(text) });
}

function where(f) {
  let loc = f.file || '';
  if (f.line) loc += `:${f.line}`;
  if (f.field) loc += ` (${f.field})`;
  return loc;
}

function validation(r) {
  if (!r) return h('p', { class: 'muted', text: 'No validation report.' });
  const findings = r.findings || [];
  const errors = findings.filter((f) => f.severity === 'error').length;
  return [
    h('p', { class: r.passed ? 'check-pass' : 'check-fail', dataset: { passed: String(!!r.passed) },
      text: `${r.passed ? '✓ Passed' : '✗ Failed'}: ${plural(errors, 'error')}, ${plural(findings.length - errors, 'warning')}${r.python_version ? ` · Python ${r.python_version}` : ''}` }),
    findings.length ? h('ul', { class: 'skill-findings' }, findings.map((f) => h('li', { dataset: { rule: f.rule, severity: f.severity } },
      h('strong', { text: f.severity }), ' ', h('code', { text: visible(where(f)) }), ' ', visible(f.message), h('small', { text: ` [${f.rule}]` })))) : null,
  ];
}

function transformation(t) {
  const src = t.source || {};
  const list = (title, items, fmt) => (items?.length ? [h('h5', { text: title }), h('ul', {}, items.map((x) => h('li', { text: visible(fmt(x)) })))] : null);
  return h('section', { class: 'skill-transformation' },
    kv([['Source', src.uri], ['Commit', src.commit || 'not a git checkout'], ['Format', src.format]]),
    list('Removed fields', t.removed_fields, (f) => `${f.field}: ${f.reason}`),
    list('Translated fields', t.translated_fields, (f) => `${f.field} → ${f.to}: ${f.reason}`),
    list('Rewritten scripts', t.rewritten_scripts, (s) => `${s.original} → ${s.entrypoint} (arguments: ${(s.args || []).join(', ') || 'none'})`),
    list('Moved files', t.moved_files, (m) => `${m.from} → ${m.to}`),
    list('Files left out', t.dropped_files, (d) => `${d.path}: ${d.reason}`),
    list('Secrets removed', t.removed_secrets, (s) => `a ${s.kind} in ${s.file}:${s.line}`),
    list('Check before approving', t.manual_review, (m) => `${m.file ? m.file + ': ' : ''}${m.message}`));
}

/** skillSummary is the card's one line of what the skill brings. */
export function skillSummary(s) {
  const r = s?.validation_report || {};
  const warnings = (r.findings || []).filter((f) => f.severity !== 'error').length;
  const parts = [plural((s?.scripts || []).length, 'script'), plural((s?.files || []).length, 'file'),
    `validation ${r.passed ? 'passed' : 'failed'}${warnings ? ` with ${plural(warnings, 'warning')}` : ''}`];
  if (s?.transformation_report) parts.push(`adapted from ${s.transformation_report.source?.format || 'another format'}`);
  if (s?.replaces) parts.push('replaces the installed version');
  return parts.join(' · ');
}

/** skillFields returns everything a skill_install card approves. */
export function skillFields(s) {
  if (!s || typeof s !== 'object') return null;
  const scripts = s.scripts || [];
  const others = (s.files || []).filter((f) => f.content);
  return [
    kv([['Skill', s.name], ['Version', s.version], ['Activation', s.activation], ['Origin', s.origin], ['From', s.dir],
      ['Skill hash', s.hash], ['Replaces', s.replaces]]),
    h('h4', { text: 'SKILL.md' }), code(s.skill_md, 'skill-md', 'SKILL.md'),
    h('h4', { text: scripts.length ? `Scripts (${scripts.length})` : 'Scripts' }),
    scripts.length ? scripts.map((f) => h('section', { class: 'skill-script', dataset: { path: f.path } },
      h('h5', {}, h('code', { text: visible(f.path) }), h('small', { class: 'muted', text: ` sha256 ${short(f.sha256)} · ${f.size} bytes` })),
      code(f.content, 'skill-script-code', f.path))) : h('p', { class: 'muted', text: 'No scripts: instructions only.' }),
    h('h4', { text: 'Validation report' }), h('div', { class: 'skill-validation' }, validation(s.validation_report)),
    s.transformation_report ? [h('h4', { text: 'What the import changed' }), transformation(s.transformation_report)] : null,
    h('h4', { text: 'Dry runs after approval' }),
    (s.dry_runs || []).length ? h('ul', { class: 'skill-dry-runs' }, s.dry_runs.map((d) => h('li', {}, h('code', { text: visible(d) }))))
      : h('p', { class: 'muted', text: 'None.' }),
    h('h4', { text: `Files (${(s.files || []).length})` }),
    h('ul', { class: 'skill-files' }, (s.files || []).map((f) => h('li', { dataset: { path: f.path } },
      h('code', { text: visible(f.path) }), h('small', { class: 'muted', text: ` ${f.size} bytes · sha256 ${short(f.sha256)}${f.binary ? ' · binary' : ''}${f.omitted ? ' · too long to show' : ''}` })))),
    others.map((f) => h('details', { class: 'skill-other' }, h('summary', {}, h('code', { text: visible(f.path) })), code(f.content, 'skill-other-code', f.path))),
  ];
}
