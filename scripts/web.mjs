// Build the dashboard (web/) into dist/web/: one script (uPlot bundled in, no CDN: the machines reach no
// internet), one style sheet (uPlot's and ours), the page. scripts/bundle.mjs then embeds the three as text.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const out = path.resolve('dist/web');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['web/app.ts'],
  outfile: path.join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox110', 'safari16'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
const uplotCss = fs.readFileSync(path.resolve('node_modules/uplot/dist/uPlot.min.css'), 'utf8');
fs.writeFileSync(path.join(out, 'app.css'), `${uplotCss}\n${fs.readFileSync('web/app.css', 'utf8')}`);
fs.copyFileSync('web/index.html', path.join(out, 'index.html'));
