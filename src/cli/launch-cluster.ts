import fs from 'node:fs';
import { backendFor } from '../backends/registry.js';
import { deleteLaunch, setLaunchHandles } from '../ledger/launches.js';
import type { PreparedLaunch } from './launch-local.js';
import { note, printJson } from './output.js';
import { self } from './self.js';

/** Submit a launch to a cluster backend and print what was submitted. Returns once submitted. */
export async function launchCluster(p: PreparedLaunch): Promise<number> {
  const { ws, job, launch, tasks, opts } = p;
  const backend = backendFor(launch.backend);
  if (!backend.submit) throw new Error(`backend ${launch.backend} cannot submit`);
  let result: Awaited<ReturnType<NonNullable<typeof backend.submit>>>;
  try {
    result = await backend.submit({
      ledger: ws.ledger,
      paths: ws.paths,
      launch,
      tasks,
      settings: { ...p.settings, termState: 'killed' },
      request: p.request,
      config: p.config,
      drover: { bin: self.bin, node: process.execPath },
    });
  } catch (err) {
    // Nothing reached the scheduler (a backend cleans up a partial submission before it throws).
    deleteLaunch(ws.ledger, launch.id);
    fs.rmSync(launch.dir, { recursive: true, force: true });
    throw err;
  }
  setLaunchHandles(ws.ledger, launch.id, result.handles);
  for (const w of result.warnings) note(`drover: warning: ${w}`);
  if (opts.json) {
    printJson({
      jobname: job.name,
      launch: String(launch.id),
      backend: launch.backend,
      tasks: tasks.length,
      tasklist: launch.tasklist,
      handles: result.handles,
      warnings: result.warnings,
    });
  } else {
    note(`launch ${launch.id}: ${result.summary}; follow with: drover status ${job.name}`);
  }
  return 0;
}
