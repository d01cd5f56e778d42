// The login page: a user token, pasted (the one-time link logs in without it: see api.ts).
import type { LoginAnswer } from '../../src/protocol/dashboard.js';
import { api, keepKey } from '../api.js';
import { h } from '../dom.js';
import { leave, logout, main, where } from '../page.js';

/** The login form (with `message`, e.g. why it shows); a login goes on with `then`. */
export function showLogin(then: () => Promise<void>, message?: string): void {
  leave();
  logout.hidden = true;
  where.textContent = '';
  const input = h('input', {
    type: 'password',
    name: 'token',
    placeholder: 'drv_…',
    autocomplete: 'off',
    'data-testid': 'token',
  });
  const note = h('p', { class: 'error' }, message ?? '');
  const form = h(
    'form',
    { class: 'login', 'data-testid': 'login' },
    h('h1', {}, 'Log in to drover'),
    h(
      'p',
      { class: 'muted' },
      'Paste a user token (the file .drover/server/token, or drover server token create), or open the one-time link drover server / drover ui printed.',
    ),
    input,
    h('button', { type: 'submit' }, 'Log in'),
    note,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    api<LoginAnswer>('/login', { method: 'POST', body: { token: input.value } })
      .then((a) => {
        keepKey(a.page_key);
        return then();
      })
      .catch((err: unknown) => {
        note.textContent = err instanceof Error ? err.message : String(err);
      });
  });
  main.replaceChildren(form);
  input.focus();
}
