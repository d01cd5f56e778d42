import { usageError } from '../errors.js';
import { jobfilePath } from './jobfile-path.js';
import { validateJobname } from './jobname.js';
import { classifyToken, type OptionDef, PRELAUNCH_USAGE } from './prelaunch-options.js';
import type { ArgMode, PrelaunchSpec } from './types.js';

const ARG_MODES: readonly ArgMode[] = ['argparse', 'hydra'];

/** Words that ask drover itself for help or its version, where an option belongs (not as an option's value). */
const OWN_REQUESTS: ReadonlyMap<string, 'help' | 'version'> = new Map([
  ['--help', 'help'],
  ['-h', 'help'],
  ['--version', 'version'],
  ['-V', 'version'],
]);

/**
 * Whether a prelaunch command line asks for help (`+h`, `+help`, `++help`, or `--help`/`-h` where an option
 * belongs) or for the version (`--version`/`-V` there), which the CLI answers before parsing. A word that is an
 * option's value — `+flag --help`, `+arg --version 1 2`, `+pos-arg -V`, `+tag --help`, `+command -h` — belongs to
 * the sweep and asks nothing, as in onager. Walks the words as parsePrelaunchArgs does; a line it cannot walk
 * asks nothing (parsing then says what is wrong).
 */
export function prelaunchRequest(argv: readonly string[]): 'help' | 'version' | undefined {
  let i = 0;
  try {
    while (i < argv.length) {
      const word = argv[i] ?? '';
      if (word === '--') return undefined;
      const token = classifyToken(word);
      if (token.kind === 'value') return OWN_REQUESTS.get(word);
      if (token.def.key === 'help') return 'help';
      i += 1;
      const values = takeValues(token.def, token.name, token.inline, argv, i);
      i += token.inline === undefined ? values.length : 0;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * Parse `drover prelaunch` arguments in onager's `+` grammar into a PrelaunchSpec. Strict where onager's
 * argparse is lax: unknown options, abbreviations, stray values and a bare `--` are usage errors.
 */
export function parsePrelaunchArgs(argv: readonly string[]): PrelaunchSpec {
  const draft: Draft = { args: [], posArgs: [], flags: [] };
  let i = 0;
  let previous: { def: OptionDef; name: string } | undefined;
  while (i < argv.length) {
    const word = argv[i] ?? '';
    if (word === '--') {
      throw usageError(`prelaunch does not accept a bare '--'; remove it (${PRELAUNCH_USAGE})`);
    }
    const token = classifyToken(word);
    if (token.kind === 'value') throw usageError(strayValueMessage(word, previous));
    i += 1;
    const values = takeValues(token.def, token.name, token.inline, argv, i);
    i += token.inline === undefined ? values.length : 0;
    apply(draft, token.def, token.name, values);
    previous = { def: token.def, name: token.name };
  }
  return finish(draft);
}

function takeValues(
  def: OptionDef,
  name: string,
  inline: string | undefined,
  argv: readonly string[],
  at: number,
) {
  if (inline !== undefined) {
    if (def.arity === 'one' || def.arity === 'optional') return [inline];
    const how = def.arity === 'none' ? 'takes no value' : `takes its values as separate words: ${name} A B`;
    throw usageError(`${name}=${inline}: ${name} ${how}`);
  }
  if (def.arity === 'none') return [];
  const values: string[] = [];
  for (let j = at; j < argv.length; j++) {
    const word = argv[j] ?? '';
    if (word === '--' || classifyToken(word).kind === 'option') break;
    values.push(word);
    if (def.arity !== 'many') break;
  }
  if (values.length === 0 && def.arity !== 'optional') {
    const what = def.arity === 'one' ? 'a value' : 'at least one value';
    throw usageError(`${name} expects ${what}; ${PRELAUNCH_USAGE}`);
  }
  return values;
}

type Draft = Partial<PrelaunchSpec> & Pick<PrelaunchSpec, 'args' | 'posArgs' | 'flags'>;

function apply(draft: Draft, def: OptionDef, name: string, values: string[]): void {
  const first = values[0] ?? '';
  switch (def.key) {
    case 'command':
      draft.command = first;
      return;
    case 'jobname':
      draft.jobname = first;
      return;
    case 'jobfile':
      draft.jobfile = first;
      return;
    case 'argMode':
      if (!ARG_MODES.includes(first as ArgMode)) {
        throw usageError(`+arg-mode ${JSON.stringify(first)} is not a mode; use argparse or hydra`);
      }
      draft.argMode = first as ArgMode;
      return;
    case 'arg':
      draft.args.push({ name: first, values: values.slice(1) });
      return;
    case 'posArg':
      draft.posArgs.push(values);
      return;
    case 'flag':
      draft.flags.push(first);
      return;
    case 'tag':
      if (values.length > 0 && first === '')
        throw usageError('+tag is empty; give the option name, e.g. +tag --tag');
      draft.tag = values.length > 0 ? first : '--tag';
      return;
    case 'tagArgs':
      draft.tagArgs = values;
      return;
    case 'noTagNumber':
      draft.noTagNumber = true;
      return;
    case 'append':
      draft.append = true;
      return;
    case 'quiet':
      draft.quiet = true;
      return;
    case 'commandsFile':
      if (first === '')
        throw usageError(
          '+commands-file is empty: give a file of commands, one per line (- for standard input)',
        );
      draft.commandsFile = first;
      return;
    case 'help':
      throw usageError(`${name} asks for help and takes no other arguments; ${PRELAUNCH_USAGE}`);
  }
}

function finish(draft: Draft): PrelaunchSpec {
  if (draft.commandsFile !== undefined) return finishCommandsFile(draft, draft.commandsFile);
  if (draft.command === undefined) throw usageError(`+command is required; ${PRELAUNCH_USAGE}`);
  if (draft.command.trim() === '')
    throw usageError('+command is empty; give the base command, e.g. +command ./train');
  if (draft.jobname === undefined) throw usageError(`+jobname is required; ${PRELAUNCH_USAGE}`);
  const jobname = validateJobname(draft.jobname);
  if (draft.jobfile !== undefined) jobfilePath(draft.jobfile, jobname);
  const spec: PrelaunchSpec = {
    command: draft.command,
    jobname,
    argMode: draft.argMode ?? 'argparse',
    args: draft.args,
    posArgs: draft.posArgs,
    flags: draft.flags,
    noTagNumber: draft.noTagNumber ?? false,
    append: draft.append ?? false,
    quiet: draft.quiet ?? false,
  };
  if (draft.jobfile !== undefined) spec.jobfile = draft.jobfile;
  if (draft.tag !== undefined) spec.tag = draft.tag;
  if (draft.tagArgs !== undefined) spec.tagArgs = draft.tagArgs;
  return spec;
}

/** `+commands-file`: the file gives whole commands, so nothing that makes commands may come with it. */
function finishCommandsFile(draft: Draft, commandsFile: string): PrelaunchSpec {
  const mixed = [
    draft.command !== undefined && '+command',
    draft.args.length > 0 && '+arg',
    draft.posArgs.length > 0 && '+pos-arg',
    draft.flags.length > 0 && '+flag',
    draft.tag !== undefined && '+tag',
    draft.tagArgs !== undefined && '+tag-args',
    draft.noTagNumber === true && '+no-tag-number',
    draft.argMode !== undefined && '+arg-mode',
  ].filter((w): w is string => w !== false);
  if (mixed.length > 0)
    throw usageError(`+commands-file gives whole commands, one per line: drop ${mixed.join(', ')}`);
  if (draft.jobname === undefined) throw usageError(`+jobname is required; ${PRELAUNCH_USAGE}`);
  const jobname = validateJobname(draft.jobname);
  if (draft.jobfile !== undefined) jobfilePath(draft.jobfile, jobname);
  return {
    command: '',
    commandsFile,
    jobname,
    argMode: 'argparse',
    args: [],
    posArgs: [],
    flags: [],
    noTagNumber: false,
    append: draft.append ?? false,
    quiet: draft.quiet ?? false,
    ...(draft.jobfile !== undefined ? { jobfile: draft.jobfile } : {}),
  };
}

function strayValueMessage(word: string, previous: { def: OptionDef; name: string } | undefined): string {
  const shown = JSON.stringify(word);
  if (previous === undefined) return `unexpected value ${shown} before any option; ${PRELAUNCH_USAGE}`;
  let hint = 'quote a value that has spaces, e.g. +command "python train.py"';
  if (previous.def.arity === 'none') hint = `${previous.name} takes no value`;
  if (previous.def.key === 'flag') hint = '+flag takes one flag: repeat +flag for each';
  return `unexpected value ${shown} after ${previous.name}: ${hint}`;
}
