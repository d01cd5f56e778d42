import assert from 'node:assert/strict';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { runDrover } from '../helpers/drover.js';
import { loginByLink, loginByToken, startUi } from '../helpers/ui.js';
import { tempWorkspace, waitFor, writeScript } from '../helpers/workspace.js';
import { poolWorkspace } from '../pool/helpers.js';

/**
 * The dashboard's HTTP side, against a real `drover ui` and a real `drover server`: who may see what (no token,
 * a worker token, a used or made-up login link, a revoked token, a cookie without its page key or without the
 * dashboard's header), and what a careless or hostile client sends in the query strings and bodies — each a 4xx
 * naming the bad value, the server still answering after.
 */

async function job(cwd: string): Promise<void> {
  writeScript(cwd, 'w.sh', 'if [ "$2" = 2 ]; then echo "bad 50%_x" >&2; exit 1; fi\n');
  const p = await runDrover(
    [
      'prelaunch',
      '+command',
      'bash w.sh',
      '+jobname',
      'j',
      '+arg',
      '--n',
      '1',
      '2',
      '3',
      '+arg',
      '--tag',
      '50%',
      'a_b',
      '+q',
    ],
    { cwd },
  );
  assert.equal(p.code, 0, p.stderr);
  const l = await runDrover(['launch', 'j', '--max-tasks', '2'], { cwd });
  assert.equal(l.code, 1, l.stderr);
}

test('drover ui: the page is public, the data needs a login; a one-time link works once; no actions', {
  timeout: 60_000,
}, async (t) => {
  const cwd = tempWorkspace(t);
  await job(cwd);
  const { base, link } = await startUi(t, cwd);
  const page = await fetch(`${base}/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  assert.equal((await fetch(`${base}/assets/app.js`)).status, 200);
  for (const route of [
    '/v1/ui/me',
    '/v1/ui/jobs',
    '/v1/ui/jobs/j',
    '/v1/ui/jobs/j/tasks',
    '/v1/ui/pools',
    '/v1/ui/events',
  ]) {
    const res = await fetch(base + route);
    assert.equal(res.status, 401, route);
  }
  const session = await loginByLink(link);
  // The link works once.
  assert.equal((await fetch(link, { redirect: 'manual' })).status, 401);
  assert.equal((await fetch(`${base}/login?code=made-up`, { redirect: 'manual' })).status, 401);
  const name = session.cookie.split('=')[0]!;
  const key = session['x-drover-page-key'];
  // A session needs its cookie and its page key: a made-up cookie, the cookie alone (as every service on this
  // host receives it), with a key not its own, or the key alone, are refused.
  const refused: Record<string, string>[] = [
    { cookie: `${name}=made-up`, 'x-drover-page-key': key },
    { cookie: session.cookie },
    { cookie: session.cookie, 'x-drover-page-key': `${key.slice(1)}x` },
    { cookie: session.cookie, 'x-drover-page-key': '' },
    { 'x-drover-page-key': key },
  ];
  for (const headers of refused) {
    const res = await fetch(`${base}/v1/ui/jobs`, { headers });
    assert.equal(res.status, 401, JSON.stringify(headers));
  }
  // Only the event stream takes the key as a query parameter (an EventSource cannot send headers).
  assert.equal(
    (await fetch(`${base}/v1/ui/jobs?page_key=${key}`, { headers: { cookie: session.cookie } })).status,
    401,
  );
  const stream = await fetch(`${base}/v1/ui/events?page_key=${key}`, { headers: { cookie: session.cookie } });
  assert.equal(stream.status, 200);
  await stream.body?.cancel();
  const me = (await (await fetch(`${base}/v1/ui/me`, { headers: session })).json()) as {
    read_only: boolean;
  };
  assert.equal(me.read_only, true);
  const jobs = (await (await fetch(`${base}/v1/ui/jobs`, { headers: session })).json()) as {
    jobs: { name: string; counts: Record<string, number> }[];
  };
  assert.equal(jobs.jobs[0]?.name, 'j');
  assert.equal(jobs.jobs[0]?.counts.failed, 2);
  // A change by cookie without the dashboard's header is refused (a form on another site cannot send it); with
  // it, drover ui still refuses: it is read-only.
  const post = (headers: Record<string, string>) =>
    fetch(`${base}/v1/ui/jobs/j/cancel`, {
      method: 'POST',
      headers: { ...session, 'content-type': 'application/json', ...headers },
      body: '{}',
    });
  const noHeader = await post({});
  assert.equal(noHeader.status, 403);
  assert.match(
    ((await noHeader.json()) as { error: { message: string } }).error.message,
    /x-drover-dashboard/,
  );
  const readOnly = await post({ 'x-drover-dashboard': '1' });
  assert.equal(readOnly.status, 403);
  assert.match(((await readOnly.json()) as { error: { message: string } }).error.message, /read-only/);
  // Logged out: the cookie is no more.
  assert.equal(
    (
      await fetch(`${base}/v1/ui/logout`, {
        method: 'POST',
        headers: { ...session, 'x-drover-dashboard': '1' },
      })
    ).status,
    200,
  );
  assert.equal((await fetch(`${base}/v1/ui/jobs`, { headers: session })).status, 401);
});

test('drover ui: bad query values are a 400 naming the value; filters take % and _ literally', {
  timeout: 60_000,
}, async (t) => {
  const cwd = tempWorkspace(t);
  await job(cwd);
  const { base, link } = await startUi(t, cwd);
  const session = await loginByLink(link);
  const get = async (route: string) => {
    const res = await fetch(base + route, { headers: session });
    return {
      status: res.status,
      body: (await res.json()) as { error?: { message: string }; total?: number; rows?: { id: number }[] },
    };
  };
  const bad: [string, number, RegExp][] = [
    ['/v1/ui/jobs/j/tasks?offset=-1', 400, /offset="-1"/],
    ['/v1/ui/jobs/j/tasks?offset=abc', 400, /offset="abc"/],
    ['/v1/ui/jobs/j/tasks?offset=1e3', 400, /offset="1e3"/],
    ['/v1/ui/jobs/j/tasks?offset=99999999999999999999', 400, /offset=/],
    ['/v1/ui/jobs/j/tasks?limit=0', 400, /limit="0"/],
    ['/v1/ui/jobs/j/tasks?limit=501', 400, /limit="501"/],
    ['/v1/ui/jobs/j/tasks?limit=2.5', 400, /limit="2.5"/],
    ['/v1/ui/jobs/j/tasks?sort=id;DROP%20TABLE%20tasks', 400, /sort="id;DROP TABLE tasks"/],
    ['/v1/ui/jobs/j/tasks?sort=t.id', 400, /sort="t.id"/],
    ['/v1/ui/jobs/j/tasks?dir=up', 400, /dir="up"/],
    ['/v1/ui/jobs/j/tasks?state=bogus', 400, /state="bogus"/],
    ['/v1/ui/jobs/j/tasks?state=failed,,running', 400, /state=""/],
    [`/v1/ui/jobs/j/tasks?q=${'x'.repeat(1001)}`, 400, /longer than 1000/],
    ['/v1/ui/jobs/j/tasks/0', 400, /task="0"/],
    ['/v1/ui/jobs/j/tasks/-1', 400, /task="-1"/],
    ['/v1/ui/jobs/j/tasks/abc', 400, /task="abc"/],
    ['/v1/ui/jobs/j/tasks/99', 404, /task 99 is not in job 'j'/],
    ['/v1/ui/jobs/j/tasks/1?attempt=0', 400, /attempt="0"/],
    ['/v1/ui/jobs/j/tasks/1?attempt=7', 404, /no attempt 7/],
    ['/v1/ui/jobs/nope', 404, /nope/],
    ['/v1/ui/jobs/..%2Fx', 400, /\.\.\/x/],
    ['/v1/ui/jobs/j/chart', 400, /field=/],
    ['/v1/ui/events?job=nope', 404, /nope/],
  ];
  for (const [route, status, message] of bad) {
    const r = await get(route);
    assert.equal(r.status, status, `${route}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.error?.message ?? '', message, route);
  }
  // Still answering, and the filters: % and _ are literal, not wildcards; a param sort; paging.
  const all = await get('/v1/ui/jobs/j/tasks');
  assert.equal(all.body.total, 6);
  const pct = await get(`/v1/ui/jobs/j/tasks?q=${encodeURIComponent('50%')}`);
  assert.deepEqual(
    pct.body.rows?.map((r) => r.id),
    [1, 2, 3],
  );
  const under = await get(`/v1/ui/jobs/j/tasks?q=${encodeURIComponent('a_b')}`);
  assert.deepEqual(
    under.body.rows?.map((r) => r.id),
    [4, 5, 6],
  );
  assert.equal((await get(`/v1/ui/jobs/j/tasks?q=${encodeURIComponent('5_%')}`)).body.total, 0);
  // Tasks 2 (--tag 50%) and 5 (--tag a_b) failed; by --tag descending: text, not the 50 a cast would make of it.
  const failed = await get('/v1/ui/jobs/j/tasks?state=failed&sort=param:--tag&dir=desc');
  assert.equal(failed.body.total, 2);
  assert.deepEqual(
    failed.body.rows?.map((r) => r.id),
    [5, 2],
  );
  const second = await get('/v1/ui/jobs/j/tasks?state=failed&sort=param:--tag&dir=desc&limit=1&offset=1');
  assert.deepEqual(
    second.body.rows?.map((r) => r.id),
    [2],
  );
  const task = (await (await fetch(`${base}/v1/ui/jobs/j/tasks/2`, { headers: session })).json()) as {
    stderr: { text: string };
  };
  assert.match(task.stderr.text, /bad 50%_x/);
});

test('drover server: the dashboard takes user tokens only; revoking one ends its sessions', {
  timeout: 60_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  const made = await runDrover(['server', 'token', 'create', '--worker', '--json'], { cwd });
  assert.equal(made.code, 0, made.stderr);
  const worker = (JSON.parse(made.stdout) as { token: string }).token;
  const login = (token: string) =>
    fetch(`${server.url}/v1/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
  assert.equal((await login(worker)).status, 403);
  assert.equal((await login('drv_000000000000_not-a-real-token-at-all')).status, 401);
  assert.equal((await login('')).status, 401);
  assert.equal(
    (
      await fetch(`${server.url}/v1/ui/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"token": 5}',
      })
    ).status,
    400,
  );
  assert.equal(
    (await fetch(`${server.url}/v1/ui/jobs`, { headers: { authorization: `Bearer ${worker}` } })).status,
    403,
  );
  assert.equal(
    (await fetch(`${server.url}/v1/ui/jobs`, { headers: { authorization: `Bearer ${server.token}` } }))
      .status,
    200,
  );
  const user = await runDrover(['server', 'token', 'create', '--json'], { cwd });
  const { token, id } = JSON.parse(user.stdout) as { token: string; id: string };
  const session = await loginByToken(server.url, token);
  assert.equal((await fetch(`${server.url}/v1/ui/jobs`, { headers: session })).status, 200);
  assert.equal((await runDrover(['server', 'token', 'revoke', id], { cwd })).code, 0);
  assert.equal((await fetch(`${server.url}/v1/ui/jobs`, { headers: session })).status, 401);
});

test('drover ui: no folder, a bad port, an address not here, a port in use: one line, exit 2, nothing made', {
  timeout: 60_000,
}, async (t) => {
  const empty = tempWorkspace(t);
  const none = await runDrover(['ui'], { cwd: empty });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /^drover: no drover folder here \(\.drover\/\)[^\n]*\n$/);
  assert.equal(fs.existsSync(path.join(empty, '.drover')), false);
  const cwd = tempWorkspace(t);
  await job(cwd);
  const holder = net.createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  t.after(() => holder.close());
  const busy = (holder.address() as AddressInfo).port;
  for (const [args, message] of [
    [['--port', '99999'], /--port '99999' is out of range/],
    [['--port', 'abc'], /--port 'abc'/],
    [['--host', '10.255.255.1'], /--host 10\.255\.255\.1 is not an address of this machine/],
    [['--port', String(busy)], new RegExp(`port ${busy} is in use`)],
  ] as [string[], RegExp][]) {
    const r = await runDrover(['ui', ...args], { cwd });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.split('\n').length, 2, `one line: ${r.stderr}`);
    assert.equal(r.stdout, '');
  }
});

test('drover server: rerun failed from the dashboard launches only the failed tasks again', {
  timeout: 90_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  await job(cwd);
  // The latest launch had settings of its own: the rerun carries them (it reruns exactly what ran).
  const settings = ['--max-tasks', '2', '--task-timeout', '30', '--retries', '1', '--requeue', '1'];
  const again1 = await runDrover(['launch', 'j', '--failed', ...settings, '--signal', 'USR1@5'], { cwd });
  assert.equal(again1.code, 1, again1.stderr);
  const session = await loginByToken(server.url, server.token);
  // The failing tasks now succeed: the rerun's outcome shows it ran them, and only them.
  writeScript(cwd, 'w.sh', 'exit 0\n');
  const res = await fetch(`${server.url}/v1/ui/jobs/j/rerun-failed`, {
    method: 'POST',
    headers: { ...session, 'x-drover-dashboard': '1' },
  });
  const body = (await res.json()) as { tasklist?: string; launch?: string; error?: { message: string } };
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.tasklist, '2,5');
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  const options = JSON.parse(
    db.prepare('SELECT options FROM launches WHERE id = ?').pluck().get(Number(body.launch)) as string,
  ) as Record<string, unknown>;
  db.close();
  assert.deepEqual(
    [options.maxTasks, options.taskTimeout, options.retries, options.requeue, options.signal],
    [2, 30, 1, 1, 'USR1@5s'],
  );
  await waitFor(
    'the rerun to end',
    async () => {
      const s = (await (await fetch(`${server.url}/v1/ui/jobs/j`, { headers: session })).json()) as {
        counts: Record<string, number>;
      };
      return s.counts.succeeded === 6;
    },
    30_000,
    200,
  );
  // Cancel a whole job: a bad tasklist is a 400 naming it; then every running task ends cancelled.
  assert.equal(
    (
      await runDrover(
        ['prelaunch', '+command', 'sleep 120; echo', '+jobname', 'long', '+arg', '--n', '1', '2', '+q'],
        { cwd },
      )
    ).code,
    0,
  );
  assert.equal((await runDrover(['launch', 'long', '--detach'], { cwd })).code, 0);
  const cancel = (body: string) =>
    fetch(`${server.url}/v1/ui/jobs/long/cancel`, {
      method: 'POST',
      headers: { ...session, 'x-drover-dashboard': '1', 'content-type': 'application/json' },
      body,
    });
  const badList = await cancel('{"tasklist": "3-1"}');
  assert.equal(badList.status, 400);
  assert.match(((await badList.json()) as { error: { message: string } }).error.message, /3-1/);
  assert.equal((await cancel('{"tasks": "all"}')).status, 400);
  const done = await cancel('{}');
  assert.deepEqual(((await done.json()) as { cancelled: number[] }).cancelled, [1, 2]);
  await waitFor(
    'both cancelled',
    async () => {
      const s = (await (await fetch(`${server.url}/v1/ui/jobs/long`, { headers: session })).json()) as {
        counts: Record<string, number>;
      };
      return s.counts.cancelled === 2;
    },
    30_000,
    200,
  );
  // Nothing failed is left to rerun: a rerun now is a 400 with drover's own words.
  const again = await fetch(`${server.url}/v1/ui/jobs/j/rerun-failed`, {
    method: 'POST',
    headers: { ...session, 'x-drover-dashboard': '1' },
  });
  const msg = (await again.json()) as { launch?: unknown; error?: { message: string } };
  assert.ok(again.status === 400 || msg.launch === null, JSON.stringify(msg));
});
