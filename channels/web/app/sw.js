// Offline shell: the app's own files are cached so Silas opens without a
// network; the app then shows itself offline and reconnects when it can.
// Only the shell is cached: the WebSocket, /activity, /secrets and every
// other API answer always go to the network and are never stored.

const CACHE = 'silas-shell-v5';
const SHELL = [
  '/', '/index.html', '/style.css', '/app.js', '/manifest.webmanifest',
  '/js/dom.js', '/js/store.js', '/js/connection.js', '/js/markdown.js', '/js/stream.js',
  '/js/cards.js', '/js/plan.js', '/js/skill.js', '/js/review.js', '/js/confirm.js', '/js/fatigue.js', '/js/secure.js', '/js/activity.js',
  '/js/canonical.js', '/js/device.js', '/js/settings.js', '/js/goals.js', '/js/webauthn.js', '/js/push.js',
  '/icons/icon.svg', '/icons/icon-192.png', '/icons/icon-512.png',
];

self.addEventListener('install', (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (e) => {
  e.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== 'GET' || url.origin !== location.origin || !SHELL.includes(url.pathname)) return;
  // Network first, so a running Silas always serves its current app; the
  // cache answers only when the network cannot.
  e.respondWith(fetch(e.request)
    .then((res) => {
      if (res.ok) {
        const copy = res.clone();
        caches.open(CACHE).then((c) => c.put(e.request, copy));
      }
      return res;
    })
    .catch(() => caches.match(e.request).then((r) => r || caches.match('/index.html'))));
});

// Web Push: Silas waits for the owner (a card asked while no app was
// open). The payload is only a title, the card's request id (the tag, so
// a card shows once) and where to open; the card itself is fetched when
// the app opens.
self.addEventListener('push', (e) => {
  let data = {};
  try { data = e.data ? e.data.json() : {}; } catch { /* not JSON: the default text */ }
  const title = typeof data.title === 'string' && data.title ? data.title.slice(0, 120) : 'Silas is waiting for you';
  e.waitUntil(self.registration.showNotification(title, {
    tag: typeof data.tag === 'string' ? data.tag : undefined,
    icon: '/icons/icon-192.png',
  }));
});

// A tap opens the app (an open window is focused) on its Review tab.
self.addEventListener('notificationclick', (e) => {
  e.notification.close();
  const url = `${new URL('/', self.location.origin).href}#review`;
  e.waitUntil(self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((list) => {
    for (const c of list) {
      if (new URL(c.url).origin === self.location.origin && 'focus' in c) return c.focus();
    }
    return self.clients.openWindow(url);
  }));
});
