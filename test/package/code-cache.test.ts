import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const require = createRequire(import.meta.url);
/** bin/load-bundle.cjs: a bundle's exports, and whether V8 refused its code cache (undefined: there was none). */
const loadBundle = require(path.join(repoRoot, 'bin', 'load-bundle.cjs')) as (file?: string) => {
  exports: { main?: unknown };
  cacheRejected: boolean | undefined;
};

/**
 * Every command but `--version` loads the bundle through bin/load-bundle.cjs, with the code cache the build made
 * of it: V8 takes a cache only for the exact text it was made from, so a build whose cache does not match what
 * the loader compiles would parse the bundle at every start again (~30 ms), silently.
 */
test('the bundle loads with the code cache the build made of it, and the cache is used', () => {
  const loaded = loadBundle();
  assert.equal(typeof loaded.exports.main, 'function');
  assert.equal(loaded.cacheRejected, false, 'the code cache is there and V8 takes it');
});

/**
 * The server framework's chunks (dist/chunks/, loaded by `drover server` and `drover ui`) load the same way:
 * every chunk the build wrote, so a chunk added to scripts/bundle.mjs is checked without an edit here.
 */
test('each chunk of the server framework loads with its code cache, and the cache is used', () => {
  const chunks = fs.readdirSync(path.join(repoRoot, 'dist', 'chunks')).filter((f) => f.endsWith('.cjs'));
  assert.ok(
    chunks.includes('fastify.cjs'),
    `the build wrote Fastify's chunk (dist/chunks/: ${chunks.join(', ')})`,
  );
  for (const chunk of chunks) {
    const loaded = loadBundle(path.join(repoRoot, 'dist', 'chunks', chunk));
    // Each package the chunk holds, by its name (scripts/bundle.mjs): Fastify, its Ajv compiler, the cookie plugin.
    const packages = Object.entries(loaded.exports as Record<string, unknown>);
    assert.ok(packages.length > 0, `${chunk} exports its packages`);
    for (const [name, pkg] of packages)
      assert.equal(typeof pkg, 'function', `${chunk} exports ${name}'s plugin or factory`);
    assert.equal(loaded.cacheRejected, false, `${chunk}: the code cache is there and V8 takes it`);
  }
});
