import { usageError } from '../errors.js';
import { MAX_JOB_TASKS } from '../util/limits.js';
import type { SweepTask } from './types.js';

/**
 * A job from a file of commands, one per line, as GNU parallel's `:::: file` and HyperQueue's `--each-line`
 * read one: each line that is not blank and not a `#` comment is one task's whole command, as written (CR of a
 * CRLF file dropped, surrounding blanks trimmed). The tasks have no tag and no params.
 */
export function commandsOfText(text: string, source: string, startId = 1): SweepTask[] {
  if (text.includes('\0'))
    throw usageError(`+commands-file ${source} holds a NUL byte: give a text file of commands, one per line`);
  const tasks: SweepTask[] = [];
  let id = startId;
  for (const raw of text.split('\n')) {
    const command = raw.trim();
    if (command === '' || command.startsWith('#')) continue;
    if (id > MAX_JOB_TASKS)
      throw usageError(`+commands-file ${source} holds more commands than a job may have (${MAX_JOB_TASKS})`);
    tasks.push({ id, command, tag: '', params: {} });
    id += 1;
  }
  if (tasks.length === 0)
    throw usageError(`+commands-file ${source} holds no commands (only blank lines and # comments)`);
  return tasks;
}
