// Bundle the CLI into one CommonJS file (dist/drover.cjs) and V8's code cache of it (dist/drover.cjs.cache):
// one file to load instead of dozens, and no parsing of it at start-up, keep every command's start close to
// Node's own. bin/drover.cjs compiles the bundle with that cache (a cache another Node rejects costs nothing but
// the parse). CommonJS because Node 20 has no code cache for ES modules, and requires a file faster than it
// imports one (a 1-task `list --json`: ESM 177 ms, CommonJS 163 ms, with the cache 146 ms; `--version` 98 ms).
// better-sqlite3 stays external (a native addon); Fastify, its Ajv compiler and its cookie plugin, which only `drover
// server` and `drover ui` load, are bundled apart into dist/chunks/ and required when those start.
//
// drover's programs in other languages (src/runner/programs/: the Python, Perl, bash and Node runners and process
// starters) go into the bundle as text: src/runner/program-files.ts, which reads them from beside itself, is
// replaced by a module holding each one's text (embedTexts). The modules tsc compiled to dist/src (what the
// tests import) read them from dist/src/runner/programs/, which this script copies.
import fs from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { build } from 'esbuild';

const programsDir = path.resolve('src/runner/programs');
/** The program files: what the folder holds but editors' and interpreters' leftovers (__pycache__, swap files). */
const programs = fs
  .readdirSync(programsDir, { withFileTypes: true })
  .filter((e) => e.isFile() && /^[\w-]+\.(py|pl|sh|cjs)$/.test(e.name))
  .map((e) => e.name)
  .sort();

/**
 * Write `file` (its text, or `text` when given) ASCII only, and V8's code cache of it beside it (FILE.cache) as
 * bin/load-bundle.cjs compiles it (the same wrapper, so the same source). esbuild escapes what is not ASCII in
 * strings, not in the comments it keeps: one dash in a comment made the whole bundle a two-byte string, read
 * (decoded) at every start in 9 ms where an ASCII one takes 4. Escaped the same way (in a comment an escape is
 * only text).
 */
function withCodeCache(file, text = fs.readFileSync(file, 'utf8')) {
  const ascii = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  fs.writeFileSync(file, ascii);
  const script = new vm.Script(Module.wrap(ascii), { filename: file });
  fs.writeFileSync(`${file}.cache`, script.createCachedData());
}

/**
 * An esbuild plugin that replaces the module `./<stem>.js` (a reader of files beside itself) with one holding
 * the files' texts: `export function <reader>(name)` returns a file's text, or throws naming what is missing.
 */
function embedTexts({ name, stem, reader, what, texts, extra = '' }) {
  return {
    name,
    setup(b) {
      b.onResolve({ filter: new RegExp(`^\\./${stem}\\.js$`) }, (args) => ({
        path: path.join(args.resolveDir, `${stem}.ts`),
        namespace: name,
      }));
      b.onLoad({ filter: /.*/, namespace: name }, () => ({
        contents: [
          extra,
          `const texts = ${JSON.stringify(texts())};`,
          `export function ${reader}(name) {`,
          '  const text = texts[name];',
          `  if (text === undefined) throw new Error("drover's bundle has no ${what} " + name);`,
          '  return text;',
          '}',
        ].join('\n'),
        loader: 'js',
      }));
    },
  };
}

const readAll = (dir, names) =>
  Object.fromEntries(names.map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));

const embedPrograms = embedTexts({
  name: 'drover-programs',
  stem: 'program-files',
  reader: 'readProgram',
  what: 'program',
  texts: () => readAll(programsDir, programs),
});

// The dashboard (web/, built to dist/web/ by scripts/web.mjs before this) goes in as text the same way:
// src/controller/dashboard/web-files.ts becomes a module holding its files.
const webFiles = ['index.html', 'app.js', 'app.css'];
const embedWeb = embedTexts({
  name: 'drover-web',
  stem: 'web-files',
  reader: 'readWebFile',
  what: 'dashboard file',
  texts: () => readAll(path.resolve('dist/web'), webFiles),
  extra: `export const WEB_FILES = ${JSON.stringify(webFiles)};`,
});

// The sweep files worker (src/sweep/sweep-files-worker.ts, a worker_threads program) goes in as text too, bundled
// on its own into one CommonJS script: src/sweep/sweep-files-start.ts, which starts it from the file beside
// itself, is replaced by a module that starts it from that text (a worker may be given code with eval).
const sweepWorker = await build({
  entryPoints: ['src/sweep/sweep-files-worker.ts'],
  bundle: true,
  write: false,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  logLevel: 'warning',
});
const sweepWorkerText = sweepWorker.outputFiles[0].text;
const embedSweepWorker = {
  name: 'drover-sweep-worker',
  setup(b) {
    b.onResolve({ filter: /^\.\/sweep-files-start\.js$/ }, (args) => ({
      path: path.join(args.resolveDir, 'sweep-files-start.ts'),
      namespace: 'drover-sweep-worker',
    }));
    b.onLoad({ filter: /.*/, namespace: 'drover-sweep-worker' }, () => ({
      contents: [
        "import { Worker } from 'node:worker_threads';",
        `const code = ${JSON.stringify(sweepWorkerText)};`,
        'export function startSweepFilesWorker(data) {',
        '  return new Worker(code, { eval: true, workerData: data, transferList: [data.port] });',
        '}',
      ].join('\n'),
      loader: 'js',
    }));
  },
};

// The server framework, bundled apart: CommonJS files loaded by the bundle only when a server starts
// (src/controller/http.ts imports them dynamically), through bin/load-bundle.cjs with a code cache of their own,
// as the bundle is: without one, every `drover server` and `drover ui` start compiles Fastify's 1.5 MB. A chunk
// holds the packages it names (Fastify with the Ajv compiler it bundles: http.ts compiles route schemas on first
// use through it), each loaded once however many of its packages the bundle imports.
fs.rmSync(path.resolve('dist/chunks'), { recursive: true, force: true });
const chunks = {
  'fastify.cjs': ['fastify', '@fastify/ajv-compiler'],
  'fastify-cookie.cjs': ['@fastify/cookie'],
};
const chunkOf = new Map(Object.entries(chunks).flatMap(([file, pkgs]) => pkgs.map((p) => [p, file])));
for (const [file, pkgs] of Object.entries(chunks)) {
  await build({
    stdin: {
      contents: `module.exports = {${pkgs.map((p) => `${JSON.stringify(p)}: require(${JSON.stringify(p)})`).join(', ')}};`,
      resolveDir: path.resolve('.'),
    },
    outfile: `dist/chunks/${file}`,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'warning',
  });
  withCodeCache(path.resolve('dist/chunks', file));
}
const chunkFiles = {
  name: 'drover-chunks',
  setup(b) {
    b.onResolve({ filter: /^(fastify|@fastify\/[\w-]+)$/ }, (args) =>
      chunkOf.has(args.path) ? { path: args.path, namespace: 'drover-chunk' } : undefined,
    );
    // A package is its chunk's export of that name; the chunk, one module of the bundle, is loaded once.
    b.onLoad({ filter: /.*/, namespace: 'drover-chunk' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`drover-chunk-file:${chunkOf.get(args.path)}`)})[${JSON.stringify(args.path)}];`,
      loader: 'js',
    }));
    b.onResolve({ filter: /^drover-chunk-file:/ }, (args) => ({
      path: args.path.slice('drover-chunk-file:'.length),
      namespace: 'drover-chunk-file',
    }));
    b.onLoad({ filter: /.*/, namespace: 'drover-chunk-file' }, (args) => ({
      contents: [
        "const path = require('node:path');",
        "const loadBundle = require('../bin/load-bundle.cjs');",
        `module.exports = loadBundle(path.join(__dirname, 'chunks', ${JSON.stringify(args.path)})).exports;`,
      ].join('\n'),
      loader: 'js',
    }));
    // The loader is bin/'s, required at run time from beside dist/ (the package holds both).
    b.onResolve({ filter: /load-bundle\.cjs$/, namespace: 'drover-chunk-file' }, (args) => ({
      path: args.path,
      external: true,
    }));
  },
};

fs.rmSync(path.resolve('dist/drover.mjs'), { force: true }); // the ESM bundle of earlier builds
await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/drover.cjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // import() becomes require(): the bundle runs as a vm.Script (bin/drover.cjs), which has no loader of its own
  // for dynamic imports.
  supported: { 'dynamic-import': false },
  external: ['better-sqlite3'],
  plugins: [embedPrograms, embedWeb, embedSweepWorker, chunkFiles],
  logLevel: 'warning',
});

// esbuild gives each module that imports a CommonJS one (every `import fs from 'node:fs'`) a namespace object of
// its own, copying the module's properties into it (__toESM): the bundle's 45 importers of node:fs and 39 of
// node:path cost ~5 ms of every start. An ES module has one namespace however many import it: the bundle's
// __toESM keeps the one it made for each module. Matched exactly (esbuild is pinned by the lockfile): a build
// whose esbuild writes the helper otherwise stops here rather than lose it without a word.
const bundleFile = path.resolve('dist/drover.cjs');
const helper = 'var __toESM = (mod, isNodeMode, target) => (';
let bundled = fs.readFileSync(bundleFile, 'utf8');
if (!bundled.includes(helper))
  throw new Error(`scripts/bundle.mjs: esbuild's __toESM is not "${helper}..." any more`);
bundled = bundled.replace(
  helper,
  `var __esmOnce = [new WeakMap(), new WeakMap()];
var __toESM = (mod, isNodeMode) => {
  if (mod == null || (typeof mod !== 'object' && typeof mod !== 'function')) return __toESMFresh(mod, isNodeMode);
  const once = __esmOnce[isNodeMode ? 1 : 0];
  let ns = once.get(mod);
  if (ns === undefined) once.set(mod, (ns = __toESMFresh(mod, isNodeMode)));
  return ns;
};
var __toESMFresh = (mod, isNodeMode, target) => (`,
);
withCodeCache(bundleFile, bundled);

const copy = path.resolve('dist/src/runner/programs');
fs.rmSync(copy, { recursive: true, force: true });
fs.mkdirSync(copy, { recursive: true });
for (const name of programs) fs.copyFileSync(path.join(programsDir, name), path.join(copy, name));
