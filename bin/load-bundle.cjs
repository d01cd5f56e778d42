'use strict';
// Loads drover's bundle (dist/drover.cjs) as Node loads a CommonJS module, but compiled with V8's code cache of
// it (dist/drover.cjs.cache, made by scripts/bundle.mjs from the same wrapped text), so start-up does not parse
// the bundle. A cache this Node cannot use (another V8) is refused by V8, and the bundle is compiled from its
// text as it would be anyway; so is a build without one.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

/**
 * Reads a bundle and its code cache once, and returns what makes a fresh instance of it: its own module, with
 * its own module-level state, each call (a process loads it once; the tests' in-process twin of the CLI once
 * per command, as a process would). The bundle is compiled once, into the function Module.wrap makes of it:
 * every module-level binding of the bundle is a local of that function, so each call of it is a fresh instance,
 * with nothing of an earlier one's state, that shares only the compiled code.
 */
function bundleLoader(file = path.join(__dirname, '..', 'dist', 'drover.cjs')) {
  let cachedData;
  try {
    cachedData = fs.readFileSync(`${file}.cache`);
  } catch {
    // No cache: compile from the text.
  }
  const source = Module.wrap(fs.readFileSync(file, 'utf8'));
  const dir = path.dirname(file);
  let compiled;
  let cacheRejected;
  return function instance() {
    if (compiled === undefined) {
      const script = new vm.Script(source, { filename: file, cachedData });
      cacheRejected = cachedData ? script.cachedDataRejected : undefined;
      compiled = script.runInThisContext();
    }
    // No parent: a parent keeps each of its children, and with them every instance made.
    const mod = new Module(file);
    mod.filename = file;
    mod.paths = Module._nodeModulePaths(dir);
    compiled(mod.exports, Module.createRequire(file), mod, file, dir);
    mod.loaded = true;
    return { exports: mod.exports, cacheRejected };
  };
}

/** The bundle's exports, and whether V8 refused its code cache (undefined: there was none). */
module.exports = function loadBundle(file) {
  return bundleLoader(file)();
};
module.exports.bundleLoader = bundleLoader;
