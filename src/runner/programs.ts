import fs from 'node:fs';
import { writeFileAtomic } from '../files.js';
import { readProgram } from './program-files.js';

/**
 * drover's programs in other languages: the files of src/runner/programs/, each checked by its language's own
 * tools (test/runner/programs.test.ts), and what each is for (docs/runners.md says why each exists).
 */
export const PROGRAMS = {
  'drover_common.py': 'Python shared by spawn-server.py and element.py: starting tasks, waiting for children',
  'element.py': 'the packed element runner in Python (Slurm, Python 3.8 or later)',
  'element.sh': 'the element runner in bash (Slurm)',
  'fork-server.pl': "the Perl fork server: starts the TypeScript runner's tasks where Python 3.8 is missing",
  'guard.cjs': "the guard of Node's own spawn: stops the tasks when the runner dies",
  'single.pl': 'the single-task runner in Perl (Grid Engine elements of one task)',
  'spawn-server.py': "the Python spawn server: starts the TypeScript runner's tasks with posix_spawn",
} as const;

/** The name of one of drover's programs (its file name). */
export type ProgramName = keyof typeof PROGRAMS;

const texts = new Map<ProgramName, string>();

/** The text of one of drover's programs, got once per process (from the bundle, or from its file). */
export function programText(name: ProgramName): string {
  let text = texts.get(name);
  if (text === undefined) {
    text = readProgram(name);
    texts.set(name, text);
  }
  return text;
}

/** Write one of drover's programs to `file` (a launch folder, for nodes that run it), executable. */
export function writeProgram(name: ProgramName, file: string): void {
  writeFileAtomic(file, programText(name));
  fs.chmodSync(file, 0o755);
}
