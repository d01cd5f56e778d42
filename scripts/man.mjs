// Write the man page, dist/man/drover.1, from the command line's own definitions (src/cli/man-page.ts), as
// compiled by tsc into dist/src: the page says what `drover --help` says, for this version.
import fs from 'node:fs';
import path from 'node:path';
import { droverTree } from '../dist/src/cli/completion.js';
import { buildProgram } from '../dist/src/cli/main.js';
import { manPage } from '../dist/src/cli/man-page.js';

const { version } = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const out = path.resolve('dist/man/drover.1');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(`${out}.tmp`, manPage(droverTree(buildProgram(version)), version));
fs.renameSync(`${out}.tmp`, out);
