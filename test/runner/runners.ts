import fs from 'node:fs';
import path from 'node:path';
import { writeElementRunner } from '../../src/backends/slurm/element-script.js';
import type { GroupTask, LaunchFile, RunSettings } from '../../src/runner/group.js';
import { singleEnv, writeSingleRunner } from '../../src/runner/single.js';
import { findPython, perlAvailable } from '../../src/runner/starters/fork-server.js';
import { childEnv, droverBin } from '../helpers/drover.js';

/**
 * Every runner drover has, each started the way its backend starts it, as a real process (no scheduler needed:
 * an element runner is started with the arguments and environment its wrapper gives it). For the runner
 * conformance suite (conformance.test.ts).
 */

/** A launch folder laid out as drover lays one out, with the settings and tasks of one run. */
export interface TestLaunch {
  /** The folder the tasks run in. */
  dir: string;
  /** The launch's folder: launch.json, the element runners' files, records/, cancel/. */
  launchDir: string;
  settings: RunSettings;
  tasks: GroupTask[];
  /** Variables of the runner's own environment (as a scheduler sets CUDA_VISIBLE_DEVICES). */
  env: Record<string, string>;
}

/** One process to start: a runner of a group (the TypeScript runner, a packed element) or of one task. */
export interface Element {
  /** The group key: the runner's record file is named after it. */
  key: string;
  /** The tasks it runs. */
  tasks: number[];
  argv: string[];
  env: NodeJS.ProcessEnv;
}

/** A runner implementation and what it can do beyond the scenarios every runner passes. */
export interface RunnerImpl {
  name: string;
  /** Why it cannot run on this machine, or false. */
  skip: string | false;
  /** It runs several tasks with slots (a packed element, a local launch); else one task per element. */
  packs: boolean;
  /** It serves `--retries` and `--task-timeout` (the others' launches run the TypeScript runner instead). */
  retries: boolean;
  /** It reads cancel requests while its tasks run (the others when they start and on SIGTERM). */
  polls: boolean;
  /** Write what it runs into the launch folder; the processes to start. */
  prepare(l: TestLaunch): Element[];
}

/** The launch file `drover runner` and the bash runner's fallback read. */
export function writeLaunchFile(l: TestLaunch): string {
  const file = path.join(l.launchDir, 'launch.json');
  const launch: LaunchFile = { ...l.settings, groups: { '1': l.tasks } };
  fs.writeFileSync(file, JSON.stringify(launch));
  return file;
}

/** drover's runner in TypeScript (`drover runner`, the bundle) with one of its three process starters. */
function typescript(spawner: 'python' | 'perl' | 'node'): RunnerImpl {
  const missing = (spawner === 'python' && !findPython()) || (spawner === 'perl' && !perlAvailable());
  return {
    name: `TypeScript runner, ${spawner} process starter`,
    skip: missing ? `no ${spawner} here` : false,
    packs: true,
    retries: true,
    polls: true,
    prepare: (l) => [
      {
        key: '1',
        tasks: l.tasks.map((t) => t.id),
        argv: [process.execPath, droverBin, 'runner', writeLaunchFile(l), '--group', '1'],
        env: childEnv({ ...l.env, DROVER_SPAWNER: spawner }),
      },
    ],
  };
}

/** The single-task runner in Perl: one element per task, as on Grid Engine. */
const perlSingle: RunnerImpl = {
  name: 'Perl single-task runner',
  skip: perlAvailable() ? false : 'no perl here',
  packs: false,
  retries: true,
  polls: false,
  prepare: (l) => {
    const { table, script } = writeSingleRunner(l.launchDir, new Map(l.tasks.map((t) => [t.id, t])));
    // The Grid Engine wrapper exports the settings, then runs the runner in the launch's working folder.
    return l.tasks.map((t) => ({
      key: String(t.id),
      tasks: [t.id],
      argv: ['perl', script, table, String(t.id)],
      env: childEnv({ ...l.env, ...singleEnv(l.settings) }),
    }));
  },
};

/** The element runner of Slurm launches, in bash or Python: packed, or one task per element (bash only). */
function element(runner: 'bash' | 'python', packed: boolean): RunnerImpl {
  return {
    name: `${runner} element runner, ${packed ? 'packed' : 'one task per element'}`,
    skip: runner === 'python' && !findPython() ? 'no python here' : false,
    packs: packed,
    retries: false,
    polls: packed,
    prepare: (l) => {
      const launchFile = writeLaunchFile(l);
      // Packed: one element of all the tasks (at least 2 per element, so the Python runner is there).
      const tasksPerNode = packed ? Math.max(2, l.tasks.length) : 1;
      const script = writeElementRunner(l.launchDir, {
        settings: l.settings,
        tasks: l.tasks,
        tasksPerNode,
        node: process.execPath,
        bin: droverBin,
      });
      const env = childEnv({ ...l.env, DROVER_ELEMENT_RUNNER: runner });
      const run = (key: string, tasks: number[]) => ({
        key,
        tasks,
        argv: ['/bin/bash', script, 'runner', launchFile, '--group', key],
        env,
      });
      if (packed)
        return [
          run(
            '1',
            l.tasks.map((t) => t.id),
          ),
        ];
      return l.tasks.map((t) => run(String(t.id), [t.id]));
    },
  };
}

/** Every runner implementation drover has. */
export const RUNNERS: readonly RunnerImpl[] = [
  typescript('python'),
  typescript('perl'),
  typescript('node'),
  perlSingle,
  element('bash', false),
  element('bash', true),
  element('python', true),
];
