import path from 'node:path';

/** Where drover keeps its files for one working folder: `<cwd>/.drover` unless DROVER_DIR says otherwise. */
export function droverDir(cwd: string = process.cwd()): string {
  return path.resolve(cwd, process.env.DROVER_DIR ?? '.drover');
}

/** The paths of one working folder's `.drover/`. */
export interface DroverPaths {
  root: string;
  ledger: string;
  jobDir(job: string): string;
  jobfile(job: string): string;
  launchDir(job: string, launchId: number): string;
  logDir(job: string, launchId: number): string;
  localConfig: string;
}

/** Build the paths of a `.drover/` folder. */
export function droverPaths(root: string = droverDir()): DroverPaths {
  return {
    root,
    ledger: path.join(root, 'ledger.db'),
    jobDir: (job) => path.join(root, 'jobs', job),
    jobfile: (job) => path.join(root, 'jobs', job, 'jobs.json'),
    launchDir: (job, id) => path.join(root, 'jobs', job, 'launches', String(id)),
    logDir: (job, id) => path.join(root, 'logs', job, String(id)),
    localConfig: path.join(root, 'config.json'),
  };
}
