import path from 'node:path';
import type { GroupFile } from './group.js';
import type { RunnerOptions } from './runner-types.js';
import { cpusAvailable, parseVisibleGpus, planSlots, type Slot } from './slots.js';

/** A runner's slots: a shared starter's, else as many as this machine's CPUs and GPUs and the group allow. */
export function runnerSlots(group: GroupFile, env: NodeJS.ProcessEnv, options: RunnerOptions): Slot[] {
  return (
    options.slots ??
    planSlots({
      cpusAvailable: cpusAvailable(),
      cpusPerTask: group.cpusPerTask,
      maxTasks: group.maxTasks,
      gpusPerTask: group.gpusPerTask,
      visibleGpus: parseVisibleGpus(env.CUDA_VISIBLE_DEVICES),
      ...(options.keepOpen ? {} : { tasks: group.tasks.length }),
    })
  );
}

/** The environment of a group's tasks: the runner's, the group's variables, its job and launch, its venv. */
export function groupEnvironment(group: GroupFile, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const baseEnv: NodeJS.ProcessEnv = {
    ...env,
    ...group.env,
    DROVER_JOBNAME: group.job,
    DROVER_LAUNCH: String(group.launch),
  };
  if (group.venv) {
    baseEnv.VIRTUAL_ENV = group.venv;
    baseEnv.PATH = `${path.join(group.venv, 'bin')}:${env.PATH ?? ''}`;
  }
  return baseEnv;
}

/** The variables of `baseEnv` that `env` lacks or sets otherwise: what a shared starter is told with each task. */
export function envBeyond(baseEnv: NodeJS.ProcessEnv, env: NodeJS.ProcessEnv): Record<string, string> {
  const extra: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined && env[k] !== v) extra[k] = v;
  return extra;
}
