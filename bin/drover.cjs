#!/usr/bin/env node
'use strict';
// Entry point. `--version` is answered here without loading anything else: it is what scripts call most
// often to check the tool, and it should cost no more than starting Node. Everything else is in one bundled
// file (dist/drover.mjs, built by `npm run build`), so start-up loads one file rather than dozens.
const argv = process.argv.slice(2);
const { version } = require('../package.json');
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${version}\n`);
} else {
  import('../dist/drover.mjs').then((m) => m.main(argv, { version, bin: __filename }));
}
