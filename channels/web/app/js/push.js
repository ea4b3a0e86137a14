// Notifications of pending cards (Web Push). The owner turns them on from
// the header button, never on load: the browser asks for permission only
// after that tap. The subscription (endpoint and the browser's public
// keys) goes to POST /push/subscribe; Silas then sends one notification
// per card asked while no app is open. The service worker (sw.js) shows
// it and opens the app on a tap.

function b64urlToBytes(s) {
  const pad = '='.repeat((4 - (s.length % 4)) % 4);
  const raw = atob((s + pad).replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

export class PushToggle {
  /**
   * @param {HTMLButtonElement} button the header button
   * @param {() => string} token the owner token
   * @param {(text: string) => void} toast tells the owner what happened
   */
  constructor(button, token, toast) {
    this.button = button;
    this.token = token;
    this.toast = toast;
    if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) return;
    button.hidden = false;
    button.addEventListener('click', () => this.toggle());
    this.refresh();
  }

  async registration() {
    return navigator.serviceWorker.ready;
  }

  async refresh() {
    try {
      const sub = await (await this.registration()).pushManager.getSubscription();
      this.show(!!sub && Notification.permission === 'granted');
    } catch { this.show(false); }
  }

  show(on) {
    this.on = on;
    this.button.textContent = on ? 'Notifications on' : 'Notify me';
    this.button.setAttribute('aria-pressed', on ? 'true' : 'false');
  }

  async post(path, body) {
    const res = await fetch(path, {
      method: path === '/push/key' ? 'GET' : 'POST',
      cache: 'no-store',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.token()}` },
      body: path === '/push/key' ? undefined : JSON.stringify(body),
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.message || `HTTP ${res.status}`);
    return data;
  }

  async toggle() {
    this.button.disabled = true;
    try {
      if (this.on) await this.turnOff(); else await this.turnOn();
    } catch (e) {
      this.toast(`Notifications: ${e.message}`);
    } finally {
      this.button.disabled = false;
      this.refresh();
    }
  }

  async turnOn() {
    const perm = await Notification.requestPermission();
    if (perm !== 'granted') {
      this.toast('Notifications are blocked for this site; allow them in the browser settings to be told when Silas waits for you.');
      return;
    }
    const { public_key: key } = await this.post('/push/key');
    const reg = await this.registration();
    let sub = await reg.pushManager.getSubscription();
    if (!sub) sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64urlToBytes(key) });
    await this.post('/push/subscribe', sub.toJSON());
    this.toast('Notifications on: Silas tells you here when a card waits and the app is closed.');
  }

  async turnOff() {
    const sub = await (await this.registration()).pushManager.getSubscription();
    if (!sub) return;
    await this.post('/push/unsubscribe', { endpoint: sub.endpoint });
    await sub.unsubscribe();
    this.toast('Notifications off for this browser.');
  }
}
