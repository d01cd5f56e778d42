import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { usageError } from '../errors.js';
import { writeFileAtomic } from '../files.js';
import { parseInteger } from '../util/integer.js';
import { COUNTS, type Range } from '../util/limits.js';

/**
 * Configuration, layered as defaults < global (~/.config/drover/config.json) < local (.drover/config.json) <
 * flags. Each backend has a section; keys are checked against the list below so a typo is an error, not a
 * silently ignored setting.
 */
export const BACKENDS = ['local', 'slurm', 'gridengine', 'pool'] as const;
export type BackendName = (typeof BACKENDS)[number];

/** Keys a backend section may set, with what each means (shown by `drover config --help`). */
export const CONFIG_KEYS: Record<string, string> = {
  header: 'shell lines run before each task command (e.g. module loads)',
  footer: 'shell lines run after each task command; the command’s exit code is kept',
  venv: 'a Python virtualenv to activate for each task',
  conda: 'a conda environment to activate for each task (cluster wrappers)',
  modules: 'space-separated environment modules to load (cluster wrappers)',
  partition: 'Slurm partition to submit to (default: the cluster’s default)',
  account: 'Slurm account',
  qos: 'Slurm QOS',
  queue: 'Grid Engine queue',
  pe: 'Grid Engine parallel environment for --cpus (default smp)',
  mem_resource: 'Grid Engine resource name for --mem (e.g. h_vmem)',
  gpu_resource: 'Grid Engine resource name for --gpus (e.g. gpu)',
  retries: 'default --retries',
  max_tasks: 'default --max-tasks',
};

export type Config = Partial<Record<BackendName, Record<string, string>>>;

/** Path of the global config file. */
export function globalConfigPath(): string {
  const base = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'drover', 'config.json');
}

/** Read one config file ({} when missing); a corrupt one is an error naming it. */
export function readConfigFile(file: string): Config {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    return JSON.parse(text) as Config;
  } catch {
    throw usageError(`config file ${file} is not valid JSON: fix it or remove it`);
  }
}

/** The settings of one backend, global then local layered. */
export function backendConfig(localFile: string, backend: BackendName): Record<string, string> {
  return { ...readConfigFile(globalConfigPath())[backend], ...readConfigFile(localFile)[backend] };
}

/** Check a backend name and key; throws a usage error naming the bad one. */
export function checkKey(backend: string, key: string): BackendName {
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw usageError(`unknown backend '${backend}' in config: use one of ${BACKENDS.join(', ')}`);
  }
  if (!(key in CONFIG_KEYS)) {
    throw usageError(`unknown config key '${key}': use one of ${Object.keys(CONFIG_KEYS).join(', ')}`);
  }
  return backend as BackendName;
}

/** Keys whose values are whole numbers, with their ranges (the flags they default). */
const NUMBER_KEYS: Record<string, Range> = { retries: COUNTS.retries, max_tasks: COUNTS.tasks };

/** Check a value before it is written: numbers in their option's range (an empty value removes the key). */
export function checkValue(key: string, value: string): void {
  const range = NUMBER_KEYS[key];
  if (range && value !== '') parseInteger(value, key, range);
}

/** Set one key in a config file (atomically; an empty value removes the key). */
export function writeConfigValue(file: string, backend: BackendName, key: string, value: string): void {
  const config = readConfigFile(file);
  const section = { ...config[backend] };
  if (value === '') delete section[key];
  else section[key] = value;
  config[backend] = section;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, `${JSON.stringify(config, null, 2)}\n`);
}
