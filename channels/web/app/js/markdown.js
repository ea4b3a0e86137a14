// A small Markdown renderer for Silas's answers and plan previews. It
// builds DOM nodes and sets only textContent and vetted attributes: raw
// HTML in the model's output is shown as text, never parsed, and links
// are limited to http(s) and mailto.

import { h } from './dom.js';

const SAFE_URL = /^(https?:|mailto:)/i;

/** render returns a DocumentFragment for markdown text. */
export function render(text) {
  const frag = document.createDocumentFragment();
  const lines = String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*$/.test(line)) { i++; continue; }
    const fence = line.match(/^\s*(```|~~~)\s*([\w-]*)/);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i++; // closing fence
      frag.append(h('pre', {}, h('code', { text: body.join('\n') })));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      // Headings inside a card stay below the card's own title.
      const level = Math.min(6, heading[1].length + 2);
      frag.append(h('h' + level, { class: 'md-h' }, inline(heading[2])));
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { frag.append(h('hr')); i++; continue; }
    if (/^\s*>/.test(line)) {
      const body = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ''));
      frag.append(h('blockquote', {}, render(body.join('\n'))));
      continue;
    }
    const listItem = /^\s*([-*+]|\d+[.)])\s+(.*)$/;
    if (listItem.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = h(ordered ? 'ol' : 'ul');
      while (i < lines.length && listItem.test(lines[i])) {
        const m = lines[i].match(listItem);
        const task = m[2].match(/^\[([ xX])\]\s+(.*)$/);
        list.append(h('li', {}, task ? [task[1] === ' ' ? '☐ ' : '☑ ', inline(task[2])] : inline(m[2])));
        i++;
      }
      frag.append(list);
      continue;
    }
    const para = [];
    while (i < lines.length && !/^\s*$/.test(lines[i]) && !/^(#{1,6}\s|\s*```|\s*~~~|\s*>)/.test(lines[i]) && !listItem.test(lines[i])) {
      para.push(lines[i++].trim());
    }
    frag.append(h('p', {}, inline(para.join('\n'))));
  }
  return frag;
}

// Inline spans: `code`, **strong**, *em* / _em_, [text](url), line breaks.
const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|\*([^*\s][\s\S]*?)\*|\b_([^_\s][\s\S]*?)_\b|\[([^\]]+)\]\(([^)\s]+)\)|\n/g;

/** inline returns the nodes of one line or paragraph of inline markdown. */
export function inline(text) {
  const out = [];
  let last = 0;
  const s = String(text ?? '');
  for (const m of s.matchAll(INLINE)) {
    if (m.index > last) out.push(s.slice(last, m.index));
    if (m[1]) out.push(h('code', { text: m[2] }));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(h('strong', {}, inline(m[3] ?? m[4])));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(h('em', {}, inline(m[5] ?? m[6])));
    else if (m[7] !== undefined) out.push(link(m[7], m[8]));
    else out.push(h('br'));
    last = m.index + m[0].length;
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
}

function link(text, url) {
  if (!SAFE_URL.test(url)) return `${text} (${url})`;
  return h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, inline(text));
}

/** plain returns markdown text with its markup removed, for summaries. */
export function plain(text) {
  return String(text ?? '')
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/^#{1,6}\s+.*$/gm, ' ')
    .replace(/[*_`>#]/g, '')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}
