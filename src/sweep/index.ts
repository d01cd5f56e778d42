/**
 * Sweeps: onager's `prelaunch` grammar (`+command +jobname +arg ...`), its expansion into tasks, and the
 * jobfile (`{"1": ["<command>", "<tag>"], ...}`) shared with onager.
 */

export { AtomicFile } from './atomic-file.js';
export { commandsOfText } from './commands-file.js';
export type { ExpandOptions } from './expand.js';
export { expandSweep, nextTaskId, planSweep, SweepPlan, tagKeyName, unknownTagArgs } from './expand.js';
export { addTasks, JobfileWriter, readJobfile, serializeJobfile, writeJobfileAtomic } from './jobfile.js';
export { DEFAULT_JOBFILE, jobfilePath } from './jobfile-path.js';
export { MAX_JOBNAME_LENGTH, validateJobname } from './jobname.js';
export type { ParamsRead, ParamsRecord } from './params-file.js';
export {
  MAX_PARAMS_PER_TASK,
  ParamsFileWriter,
  paramsFileLimit,
  paramsFilePath,
  paramsOfEntries,
  readParamsFile,
  serializeParamsFile,
} from './params-file.js';
export { parsePrelaunchArgs, prelaunchRequest } from './parse-args.js';
export type { Arity, OptionDef, OptionKey } from './prelaunch-options.js';
export { PRELAUNCH_OPTIONS, PRELAUNCH_USAGE } from './prelaunch-options.js';
export type { SweepFileWriters } from './sweep-files.js';
export { SweepFilesWorker } from './sweep-files.js';
export type { TaskBatch } from './task-batch.js';
export { BATCH_SIZE, batchesOfTasks, emptyBatch } from './task-batch.js';
export type { ArgMode, JobEntry, PrelaunchSpec, SweepArg, SweepSpec, SweepTask } from './types.js';
