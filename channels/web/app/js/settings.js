// The Device screen: shows whether this browser signs its messages and
// enrols it with a code from `silas devices add`. A key Silas no longer
// accepts is also shown in a banner above every surface, with a way back
// here to enrol again.

import { $, clear, h } from './dom.js';

const STATUS = {
  loading: 'Checking this device’s key…',
  unsupported: 'This browser cannot create Ed25519 keys, so your messages from it are not signed: they reach Silas as signed-in (auth), not as you (owner).',
  none: 'This device has no key yet: your messages reach Silas as signed-in (auth), not as you (owner). Enrol it to sign them.',
  enrolled: 'This device is enrolled: every message you send from it is signed and reaches Silas as you (owner).',
  revoked: 'Silas no longer accepts this device’s key: it was revoked. Your messages now reach Silas as signed-in (auth), not as you. Enrol again with a new code.',
  unknown: 'Silas does not know this device’s key (it was removed, or Silas’s data was reset). Your messages reach Silas as signed-in (auth). Enrol again with a new code.',
};

const BANNER = {
  revoked: 'Silas no longer accepts this device’s key (revoked). Your messages are not signed as you.',
  unknown: 'Silas does not know this device’s key. Your messages are not signed as you.',
};

export class DeviceScreen {
  constructor({ device, toast }) {
    this.device = device;
    this.toast = toast;
    this.dialog = $('#device-dialog');
    this.opener = null;
    $('#device-open').addEventListener('click', (e) => this.open(e.currentTarget));
    $('#device-banner-enrol').addEventListener('click', (e) => this.open(e.currentTarget));
    $('#device-close').addEventListener('click', () => this.dialog.close());
    // Back to what opened the screen, or to the header button when that
    // was the banner and enrolling hid it.
    this.dialog.addEventListener('close', () => {
      (this.opener?.getClientRects().length ? this.opener : $('#device-open')).focus();
    });
    $('#device-form').addEventListener('submit', (e) => { e.preventDefault(); this.enrol(); });
    $('#device-forget').addEventListener('click', () => this.forget());
    device.addEventListener('change', () => this.render());
    this.render();
  }

  open(opener) {
    this.opener = opener;
    $('#device-error').textContent = '';
    this.render();
    if (!this.dialog.open) this.dialog.showModal();
    (this.needsCode() ? $('#device-code') : $('#device-close')).focus();
    this.device.check();
  }

  needsCode() { return ['none', 'revoked', 'unknown'].includes(this.device.state); }

  render() {
    const { state, device } = this.device;
    $('#device-open').dataset.state = state;
    const skew = Math.round(this.device.skewMs / 60000);
    $('#device-status').textContent = (STATUS[state] || '') + (state === 'enrolled' && skew
      ? ` This device’s clock is ${Math.abs(skew)} min ${skew > 0 ? 'behind' : 'ahead of'} Silas’s; messages are stamped with Silas’s time.` : '');
    $('#device-dialog').dataset.state = state;
    const info = clear($('#device-info'));
    if (device && state !== 'none') {
      info.append(
        h('div', {}, h('dt', { text: 'Name' }), h('dd', { text: device.name })),
        h('div', {}, h('dt', { text: 'Key id' }), h('dd', {}, h('code', { text: device.id }))),
        h('div', {}, h('dt', { text: 'Enrolled' }), h('dd', { text: new Date(device.added_at).toLocaleString() })));
    }
    info.hidden = !info.firstChild;
    $('#device-form').hidden = !this.needsCode();
    $('#device-enrol').textContent = state === 'none' ? 'Enrol this device' : 'Enrol again';
    $('#device-forget').hidden = !device || state === 'none';
    // The banner is an alert: set its text only when it changes, or screen
    // readers would announce it again on every check.
    const banner = BANNER[state] || '';
    $('#device-banner').hidden = !banner;
    if ($('#device-banner-text').textContent !== banner) $('#device-banner-text').textContent = banner;
  }

  async enrol() {
    const code = $('#device-code').value.trim();
    const err = $('#device-error');
    if (!code) { err.textContent = 'Paste the code `silas devices add` printed.'; $('#device-code').focus(); return; }
    const button = $('#device-enrol');
    button.disabled = true;
    err.textContent = '';
    $('#device-status').textContent = 'Enrolling…';
    const problem = await this.device.enrol(code, $('#device-name').value.trim());
    button.disabled = false;
    this.render();
    if (problem) {
      err.textContent = problem;
      $('#device-code').focus();
      return;
    }
    $('#device-code').value = '';
    this.toast('This device now signs your messages.');
    $('#device-close').focus();
  }

  async forget() {
    const revoked = await this.device.forget();
    this.toast(revoked ? 'The key is revoked and gone from this browser.'
      : 'The key is gone from this browser; Silas could not be reached to revoke it: run `silas devices revoke`.');
    $('#device-code').focus();
  }
}
