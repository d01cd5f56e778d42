#!/usr/bin/env node
'use strict';
// Entry point. `--version` is answered here without loading anything else: it is what scripts call most
// often to check the tool, and it should cost no more than starting Node. Everything else is in one bundled
// file (dist/drover.cjs, built by `npm run build`), compiled with V8's code cache of it (load-bundle.cjs), so
// start-up neither loads dozens of files nor parses the bundle.
const argv = process.argv.slice(2);
const { version } = require('../package.json');
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${version}\n`);
} else {
  require('./load-bundle.cjs')().exports.main(argv, { version, bin: __filename });
}
