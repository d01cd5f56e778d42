import fs from 'node:fs';
import path from 'node:path';
import { Ledger } from '../ledger/ledger.js';
import { type DroverPaths, droverPaths } from '../paths.js';
import { validateJobname } from '../sweep/index.js';
import { note } from './output.js';

/** The working folder's `.drover/`: its paths and open ledger. */
export interface Workspace {
  paths: DroverPaths;
  ledger: Ledger;
}

/** Open the working folder's `.drover/`, creating it on first use and saying so once (on stderr). */
export function openWorkspace(): Workspace {
  const paths = droverPaths();
  const existed = fs.existsSync(paths.root);
  const ledger = Ledger.open(paths);
  if (!existed) note(`drover: created ${paths.root} for the ledger, jobfiles and logs`);
  return { paths, ledger };
}

/**
 * Open `.drover/` only if it exists (commands about existing jobs in a fresh folder create nothing). For a
 * command that only reads, a `.drover` that cannot be written is opened read-only: it still answers, saying
 * once that the answer may be stale. A command that writes (`write`) fails instead, in one line.
 */
export function openExistingWorkspace(options: { write?: boolean } = {}): Workspace | undefined {
  const paths = droverPaths();
  if (!fs.existsSync(paths.ledger)) {
    // Jobfiles put there by onager or by hand are jobs too: their ledger is made when first needed.
    if (handMadeJobs(paths).length === 0) return undefined;
    return { paths, ledger: Ledger.open(paths) };
  }
  return { paths, ledger: options.write ? Ledger.open(paths) : Ledger.openForReading(paths) };
}

/**
 * The names of the jobs whose jobfile is in `.drover/jobs/` (onager's format, written by drover, onager or an
 * editor), whether or not the ledger knows them yet.
 */
export function handMadeJobs(paths: DroverPaths): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(paths.jobDir('x')));
  } catch {
    return [];
  }
  const valid = (n: string) => {
    try {
      validateJobname(n);
      return true;
    } catch {
      return false;
    }
  };
  return names.filter((n) => valid(n) && fs.existsSync(paths.jobfile(n))).sort();
}
