/**
 * Sweeps: onager's `prelaunch` grammar (`+command +jobname +arg ...`), its expansion into tasks, and the
 * jobfile (`{"1": ["<command>", "<tag>"], ...}`) shared with onager.
 */

export { commandsOfText } from './commands-file.js';
export type { ExpandOptions } from './expand.js';
export { expandSweep, nextTaskId, tagKeyName, unknownTagArgs } from './expand.js';
export { addTasks, readJobfile, serializeJobfile, writeJobfileAtomic } from './jobfile.js';
export { DEFAULT_JOBFILE, jobfilePath } from './jobfile-path.js';
export { MAX_JOBNAME_LENGTH, validateJobname } from './jobname.js';
export type { ParamsRead, ParamsRecord } from './params-file.js';
export {
  MAX_PARAMS_PER_TASK,
  paramsFileLimit,
  paramsFilePath,
  paramsOfEntries,
  readParamsFile,
  serializeParamsFile,
} from './params-file.js';
export { parsePrelaunchArgs, prelaunchRequest } from './parse-args.js';
export type { Arity, OptionDef, OptionKey } from './prelaunch-options.js';
export { PRELAUNCH_OPTIONS, PRELAUNCH_USAGE } from './prelaunch-options.js';
export type { ArgMode, JobEntry, PrelaunchSpec, SweepArg, SweepSpec, SweepTask } from './types.js';
