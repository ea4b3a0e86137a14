// Local persistence. The owner's token, the stream, the review queue and
// the outbox of unacknowledged messages survive a reload or a dropped
// connection. Nothing secret but the owner's own token is stored, and the
// token never goes into a URL.

const PREFIX = 'silas.';

function read(key, fallback) {
  try {
    const v = localStorage.getItem(PREFIX + key);
    return v === null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // Storage full or disabled: the app still works, it just forgets.
  }
}

export const store = {
  token: () => read('token', ''),
  setToken: (t) => write('token', t),
  clearToken: () => localStorage.removeItem(PREFIX + 'token'),

  outbox: () => read('outbox', []),
  setOutbox: (o) => write('outbox', o),

  stream: () => read('stream', []),
  // Only the most recent items are kept: the stream is a view, the audit
  // log (Activity) is the record.
  setStream: (items) => write('stream', items.slice(-200)),

  cards: () => read('cards', []),
  setCards: (cards) => write('cards', cards),

  // work_item_id -> {title, verify, failures} of the plans the owner was
  // asked about, so that status rows and results cards keep the plan's
  // title after a reload. Only the most recent are kept.
  plans: () => read('plans', []),
  setPlans: (plans) => write('plans', plans.slice(-50)),

  decisions: () => read('decisions', []),
  setDecisions: (d) => write('decisions', d.slice(-200)),

  deviceCredential: () => read('device_credential', ''),

  /** clearSession forgets everything tied to the owner's session. */
  clearSession() {
    for (const k of ['token', 'outbox', 'stream', 'cards', 'plans', 'decisions']) localStorage.removeItem(PREFIX + k);
  },
};
