// Small DOM helpers. Nothing here ever assigns HTML: text goes through
// textContent, so no string from the server can become markup.

/**
 * h builds an element. attrs: class, text, on<Event> handlers, dataset
 * (data-*), aria-* and other attributes; children: nodes, strings or
 * arrays of them (null/false are skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    // Properties, not attributes, for non-strings and for value (a
    // textarea has no value attribute).
    else if (k in el && (typeof v !== 'string' || k === 'value')) el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** clear removes every child of el. */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** $ finds one element by selector. */
export const $ = (sel, root = document) => root.querySelector(sel);

/** relTime renders a timestamp as a short local time. */
export function shortTime(ts) {
  const d = ts ? new Date(ts) : new Date();
  if (Number.isNaN(d.getTime())) return '';
  return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}
