import type { Slot } from '../slots.js';
import { ForkServerStarter, findPython, perlAvailable } from './fork-server.js';
import { NodeSpawnStarter } from './node-spawn.js';
import type { ProcessStarter } from './starter.js';

/**
 * The fastest way to start tasks that this machine has: the Python spawn server (posix_spawn, Python 3.8+),
 * else the Perl fork server, else Node's spawn. DROVER_SPAWNER=python|perl|node forces one.
 */
export function chooseStarter(
  slots: readonly Slot[],
  baseEnv: NodeJS.ProcessEnv,
  cwd: string,
  wanted: string | undefined,
  killGrace = 5,
): ProcessStarter {
  if (wanted === 'node') return new NodeSpawnStarter(slots, baseEnv, killGrace);
  if (wanted !== 'perl') {
    const python = findPython();
    if (python)
      return new ForkServerStarter(slots, baseEnv, cwd, { kind: 'python', interpreter: python }, killGrace);
    if (wanted === 'python') throw new Error('DROVER_SPAWNER=python: no Python 3.8 or later found');
  }
  if (wanted === 'perl' || perlAvailable())
    return new ForkServerStarter(slots, baseEnv, cwd, { kind: 'perl', interpreter: 'perl' }, killGrace);
  return new NodeSpawnStarter(slots, baseEnv, killGrace);
}
