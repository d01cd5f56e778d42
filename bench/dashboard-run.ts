/**
 * Run by bench/local/dashboard.ts as its own process (playwright is asynchronous; the local benchmarks are not):
 * `node dist/bench/dashboard-run.js DIR JOB RUNS`. Starts `drover ui` in DIR, logs in headless Chromium with
 * its one-time link, then RUNS times opens the job's page in a fresh page and times it from navigation to the
 * task table's rows being on screen (the charts and counts come with it). Prints {samples_ms, rows, total} as
 * JSON on stdout; stops what it started.
 */
import { spawn } from 'node:child_process';
import { chromium } from 'playwright-core';
import { DROVER_BIN, droverEnv, NODE } from './util.js';

const [dir, job, runsText] = process.argv.slice(2);
if (!dir || !job || !runsText) throw new Error('usage: dashboard-run.js DIR JOB RUNS');
const ui = spawn(NODE, [DROVER_BIN, 'ui', '--port', '0'], {
  cwd: dir,
  env: droverEnv(),
  stdio: ['ignore', 'ignore', 'pipe'],
});
let err = '';
ui.stderr.setEncoding('utf8');
const link = await new Promise<string>((resolve, reject) => {
  ui.stderr.on('data', (d: string) => {
    err += d;
    const m = /open (http:\/\/\S+\/login\?code=\S+)/.exec(err);
    if (m) resolve(m[1]!);
  });
  ui.once('exit', (code) => reject(new Error(`drover ui exited ${code}: ${err}`)));
});
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const login = await context.newPage();
  await login.goto(link);
  await login.waitForSelector('[data-testid=jobs]');
  await login.close();
  const base = link.replace(/\/login.*/, '');
  const samples: number[] = [];
  let rows = 0;
  let total = '';
  for (let i = 0; i < Number(runsText); i++) {
    const page = await context.newPage();
    const t0 = Date.now();
    await page.goto(`${base}/#/jobs/${encodeURIComponent(job)}`);
    await page.locator('[data-testid=tasks] tbody tr').first().waitFor({ timeout: 60_000 });
    samples.push(Date.now() - t0);
    rows = await page.locator('[data-testid=tasks] tbody tr').count();
    total = (await page.locator('[data-testid=pager]').textContent()) ?? '';
    await page.close();
  }
  process.stdout.write(`${JSON.stringify({ samples_ms: samples, rows, total })}\n`);
} finally {
  await browser.close();
  ui.kill('SIGTERM');
}
