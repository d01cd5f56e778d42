import fs from 'node:fs';

/**
 * The text of a file of src/runner/programs/, read from the copy beside this module (the build copies the folder
 * to dist/src/runner/programs/). The bundle, dist/drover.cjs, has no such folder beside it: scripts/bundle.mjs
 * replaces this module with one that holds every program's text, so the CLI reads no file to get one.
 */
export function readProgram(name: string): string {
  return fs.readFileSync(new URL(`./programs/${name}`, import.meta.url), 'utf8');
}
