#!/usr/bin/env node
'use strict';
// Entry point. `--version` is answered here without loading anything else: it is what scripts call most
// often to check the tool, and it should cost no more than starting Node.
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${require('../package.json').version}\n`);
} else {
  import('../dist/src/cli/main.js').then((m) => m.main(argv));
}
