// Bundle the CLI into one ESM file (dist/drover.mjs): one file to load instead of dozens keeps start-up
// close to Node's own. better-sqlite3 stays external (a native addon).
//
// drover's programs in other languages (src/runner/programs/: the Python, Perl, bash and Node runners and process
// starters) go into the bundle as text: src/runner/program-files.ts, which reads them from beside itself, is
// replaced by a module importing each with esbuild's text loader. The modules tsc compiled to dist/src (what the
// tests import) read them from dist/src/runner/programs/, which this script copies.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const programsDir = path.resolve('src/runner/programs');
/** The program files: what the folder holds but editors' and interpreters' leftovers (__pycache__, swap files). */
const programs = fs
  .readdirSync(programsDir, { withFileTypes: true })
  .filter((e) => e.isFile() && /^[\w-]+\.(py|pl|sh|cjs)$/.test(e.name))
  .map((e) => e.name)
  .sort();

const embedPrograms = {
  name: 'drover-programs',
  setup(b) {
    b.onResolve({ filter: /^\.\/program-files\.js$/ }, (args) => ({
      path: path.join(args.resolveDir, 'program-files.ts'),
      namespace: 'drover-programs',
    }));
    b.onLoad({ filter: /.*/, namespace: 'drover-programs' }, () => ({
      contents: [
        ...programs.map((name, i) => `import p${i} from ${JSON.stringify(`./programs/${name}`)};`),
        `const texts = { ${programs.map((name, i) => `${JSON.stringify(name)}: p${i}`).join(', ')} };`,
        'export function readProgram(name) {',
        '  const text = texts[name];',
        '  if (text === undefined) throw new Error("drover\'s bundle has no program " + name);',
        '  return text;',
        '}',
      ].join('\n'),
      resolveDir: path.dirname(programsDir),
      loader: 'js',
    }));
    b.onLoad({ filter: /[\\/]src[\\/]runner[\\/]programs[\\/][^\\/]+$/ }, (args) => ({
      contents: fs.readFileSync(args.path, 'utf8'),
      loader: 'text',
    }));
  },
};

// The dashboard (web/, built to dist/web/ by scripts/web.mjs before this) goes in as text the same way:
// src/controller/dashboard/web-files.ts becomes a module holding its files.
const webDir = path.resolve('dist/web');
const webFiles = ['index.html', 'app.js', 'app.css'];
const embedWeb = {
  name: 'drover-web',
  setup(b) {
    b.onResolve({ filter: /^\.\/web-files\.js$/ }, (args) => ({
      path: path.join(args.resolveDir, 'web-files.ts'),
      namespace: 'drover-web',
    }));
    b.onLoad({ filter: /.*/, namespace: 'drover-web' }, () => ({
      contents: [
        `export const WEB_FILES = ${JSON.stringify(webFiles)};`,
        `const texts = ${JSON.stringify(Object.fromEntries(webFiles.map((f) => [f, fs.readFileSync(path.join(webDir, f), 'utf8')])))};`,
        'export function readWebFile(name) {',
        '  const text = texts[name];',
        '  if (text === undefined) throw new Error("drover\'s bundle has no dashboard file " + name);',
        '  return text;',
        '}',
      ].join('\n'),
      loader: 'js',
    }));
  },
};

// The chunks' names carry a hash of their content: drop the last build's, or they pile up.
fs.rmSync(path.resolve('dist/chunks'), { recursive: true, force: true });

await build({
  entryPoints: ['src/cli/main.ts'],
  outdir: 'dist',
  entryNames: 'drover',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  splitting: true,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external: ['better-sqlite3'],
  plugins: [embedPrograms, embedWeb],
  banner: {
    js: "import { createRequire as __droverRequire } from 'node:module'; const require = __droverRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

const copy = path.resolve('dist/src/runner/programs');
fs.rmSync(copy, { recursive: true, force: true });
fs.mkdirSync(copy, { recursive: true });
for (const name of programs) fs.copyFileSync(path.join(programsDir, name), path.join(copy, name));
