// The drover dashboard (docs/dashboard.md): a page per thing — jobs, a job, a task, pools — drawn from the
// server's /v1/ui routes (answers typed by src/protocol/dashboard.ts), redrawn when the server's event stream
// says something changed. Everything a user wrote (commands, tags, params, logs) goes into the page as text,
// never as markup. This file routes: the address's fragment chooses the view; api.ts asks the server, page.ts
// holds the live stream and the current view, views/ draws each page.
import type { LogoutAnswer, MeAnswer } from '../src/protocol/dashboard.js';
import { api, keepKey } from './api.js';
import { h } from './dom.js';
import { logout, main, me, navigate, setLogin, setMe, showError, where } from './page.js';
import { jobView } from './views/job.js';
import { jobsView } from './views/jobs.js';
import { showLogin } from './views/login.js';
import { poolsView } from './views/pools.js';
import { taskView } from './views/task.js';

/** Show the view the address names (after asking who serves the dashboard, once per login). */
async function route(): Promise<void> {
  navigate();
  let who: MeAnswer;
  try {
    who = me ?? (await api<MeAnswer>('/me'));
    setMe(who);
  } catch (err) {
    return showError(err);
  }
  logout.hidden = false;
  // The folder's name (its full path on hover): enough to tell dashboards apart, and a screenshot shows no path.
  where.textContent = `${
    who.folder
      .replace(/\/\.drover\/?$/, '')
      .split('/')
      .at(-1) ?? ''
  }${who.read_only ? ' — read-only' : ''}`;
  where.title = who.folder;
  // The last view's content goes at once: its first draw waits for the new view's stream (see listen).
  main.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'jobs' && parts[1] && parts[2] === 'tasks' && parts[3])
    taskView(parts[1], Number(parts[3]));
  else if (parts[0] === 'jobs' && parts[1]) jobView(parts[1]);
  else if (parts[0] === 'pools') poolsView();
  else jobsView();
  // The view's first draw comes with its stream's 'ready' (see listen).
}

setLogin((message) => showLogin(route, message));
logout.addEventListener('click', () => {
  void api<LogoutAnswer>('/logout', { method: 'POST' }).finally(() => {
    keepKey(undefined);
    setMe(undefined);
    showLogin(route, 'Logged out.');
  });
});
window.addEventListener('hashchange', () => void route());

void route();
