// Offline shell: the app's own files are cached so Silas opens without a
// network; the app then shows itself offline and reconnects when it can.
// Only the shell is cached: the WebSocket, /activity, /secrets and every
// other API answer always go to the network and are never stored.

const CACHE = 'silas-shell-v4';
const SHELL = [
  '/', '/index.html', '/style.css', '/app.js', '/manifest.webmanifest',
  '/js/dom.js', '/js/store.js', '/js/connection.js', '/js/markdown.js', '/js/stream.js',
  '/js/cards.js', '/js/plan.js', '/js/skill.js', '/js/review.js', '/js/confirm.js', '/js/fatigue.js', '/js/secure.js', '/js/activity.js',
  '/js/canonical.js', '/js/device.js', '/js/settings.js', '/js/goals.js', '/js/webauthn.js',
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
