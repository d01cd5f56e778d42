import type { Command } from 'commander';
import {
  BACKENDS,
  CONFIG_KEYS,
  checkKey,
  checkValue,
  globalConfigPath,
  readConfigFile,
  writeConfigValue,
} from '../config/config.js';
import { usageError } from '../errors.js';
import { droverPaths } from '../paths.js';
import { printJson } from './output.js';

interface ConfigOptions {
  read?: boolean;
  write?: string[];
  global?: boolean;
  local?: boolean;
  json?: boolean;
}

/** Register `drover config`. */
export function registerConfig(program: Command): void {
  program
    .command('config')
    .description(
      'read or write settings per backend (as onager config): header, footer, venv, partition, ...',
    )
    .option('--read', 'print the settings (merged global < local unless --global/--local)')
    .option('--write <backend_key_value...>', 'set BACKEND KEY VALUE (an empty VALUE removes the key)')
    .option('--global', `the global file (${globalConfigPath().replace(process.env.HOME ?? '~', '~')})`)
    .option('--local', 'the folder’s .drover/config.json (the default for --write)')
    .option('--json', 'print as JSON')
    .addHelpText(
      'after',
      `\nBackends: ${BACKENDS.join(', ')}\nKeys:\n${Object.entries(CONFIG_KEYS)
        .map(([k, v]) => `  ${k.padEnd(13)} ${v}`)
        .join('\n')}`,
    )
    .action((opts: ConfigOptions) => config(opts));
}

function config(opts: ConfigOptions): void {
  if (opts.global && opts.local) throw usageError('--global and --local both given: pick one');
  const localFile = droverPaths().localConfig;
  if (opts.write) {
    if (opts.write.length !== 3) {
      throw usageError(
        `--write takes BACKEND KEY VALUE, got ${opts.write.length} word(s): e.g. --write local venv ./env`,
      );
    }
    const [backend, key, value] = opts.write as [string, string, string];
    const b = checkKey(backend, key);
    checkValue(key, value);
    writeConfigValue(opts.global ? globalConfigPath() : localFile, b, key, value);
    return;
  }
  const merged = opts.global
    ? readConfigFile(globalConfigPath())
    : opts.local
      ? readConfigFile(localFile)
      : mergeConfigs(readConfigFile(globalConfigPath()), readConfigFile(localFile));
  if (opts.json) {
    printJson(merged);
    return;
  }
  for (const [backend, section] of Object.entries(merged)) {
    process.stdout.write(`[${backend}]\n`);
    for (const [k, v] of Object.entries(section ?? {})) process.stdout.write(`${k} = ${JSON.stringify(v)}\n`);
  }
}

function mergeConfigs(a: ReturnType<typeof readConfigFile>, b: ReturnType<typeof readConfigFile>) {
  const out: Record<string, Record<string, string>> = {};
  for (const backend of BACKENDS) {
    const section = { ...a[backend], ...b[backend] };
    if (Object.keys(section).length > 0) out[backend] = section;
  }
  return out;
}
