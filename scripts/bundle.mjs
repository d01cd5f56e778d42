// Bundle the CLI into one ESM file (dist/drover.mjs): one file to load instead of dozens keeps start-up
// close to Node's own. better-sqlite3 stays external (a native addon).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/drover.mjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external: ['better-sqlite3'],
  banner: {
    js: "import { createRequire as __droverRequire } from 'node:module'; const require = __droverRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
