import type { Command } from 'commander';

/**
 * Examples for every command, in one place: `--help` prints them after the options, and the man page has them.
 * Each is a command that works as written in a folder with the job `lr` of the README.
 */
export const EXAMPLES: Record<string, readonly string[]> = {
  '': [
    "drover prelaunch +command 'python train.py' +jobname lr +arg --lr 0.1 0.01 +arg --seed 1 2 3 +tag",
    'drover launch --jobname lr --max-tasks 4',
    'drover status lr',
    'drover launch --jobname lr --failed',
  ],
  prelaunch: [
    "drover prelaunch +command 'python train.py' +jobname lr +arg --lr 0.1 0.01 +arg --seed 1 2 +tag",
    "drover prelaunch +command 'python train.py' +jobname lr +arg --lr 0.001 +arg --seed 1 2 +tag +append",
    'drover prelaunch +commands-file commands.txt +jobname batch',
  ],
  launch: [
    'drover launch --jobname lr --max-tasks 4                 # here, 4 at a time, live progress',
    'drover launch --jobname lr --tasklist 1-3,7 --retries 2',
    'drover launch --jobname lr --failed --backend slurm --duration 1:00:00 --mem 4G',
    'drover launch --jobname lr --backend gridengine --tasks-per-node 50 --dry-run',
    "drover launch --command 'python prep.py' --jobname prep",
  ],
  status: ['drover status', 'drover status lr', "drover status lr --json | jq '.counts'"],
  watch: ['drover watch lr', 'drover watch lr --launch 2', 'drover watch lr -q && echo all succeeded'],
  list: [
    'drover list lr',
    'drover list lr --state failed,killed',
    'drover list lr --attempts --tasklist 7',
    'drover list lr --json | jq -r \'.[] | select(.state=="failed") | .task\'',
    'drover list lr --columns task,state,duration,host,command',
    'drover list lr --csv > lr.csv',
    'drover list lr --joblog lr.joblog',
  ],
  results: [
    'drover results lr',
    'drover results lr --best loss --json',
    'drover results lr --sort acc:desc --csv > lr.csv',
  ],
  logs: ['drover logs lr 7', 'drover logs lr 7 --err --attempt 1', 'drover logs lr 7 --follow'],
  cancel: ['drover cancel lr', 'drover cancel lr --tasklist 3-7 --yes'],
  history: ['drover history -n 10', 'drover history --launch --since 2026-11-30 --details'],
  config: [
    "drover config --write slurm header 'module load cuda'",
    'drover config --write local venv ./env --global',
    'drover config --read --json',
  ],
  server: ['drover server &', 'drover server stop'],
  'server start': ['drover server start --port 7733', 'drover server start --host 0.0.0.0 --port 7733'],
  'server stop': ['drover server stop'],
  'server token': ['drover server token list'],
  'server token create': [
    'drover server token create --name ci',
    'drover server token create --worker --pool cpu',
  ],
  'server token list': ['drover server token list --json'],
  'server token revoke': ['drover server token revoke 3'],
  ui: ['drover ui', 'drover ui --port 8080'],
  pool: ['drover pool create cpu --workers 4', 'drover pool status', 'drover pool down cpu'],
  'pool create': [
    'drover pool create cpu --workers 4 --cpus 2',
    "drover pool create gpu --backend slurm --workers 8 --gpus 1 --setup 'pip install -e .'",
    'drover pool create auto --backend slurm --auto --max-workers 8 --idle-timeout 5m',
  ],
  'pool status': ['drover pool status cpu', 'drover pool status cpu --all --json'],
  'pool scale': ['drover pool scale cpu --workers 8'],
  'pool resume': [
    'drover pool resume gpu    # submit allocations again after a pause (pool status says why)',
  ],
  'pool down': ['drover pool down cpu', 'drover pool down cpu --force'],
  worker: [
    'drover worker --server http://127.0.0.1:7733 --pool cpu --token-file .drover/pools/cpu/worker-token',
    'drover worker --server http://login1:7733 --pool cpu --token-file wtoken --no-shared-fs   # logs sent over HTTP',
  ],
  completion: [
    'source <(drover completion bash)             # in ~/.bashrc',
    'source <(drover completion zsh)              # in ~/.zshrc, after compinit',
    'drover completion fish | source              # in ~/.config/fish/config.fish',
  ],
};

/** The words of a command after `drover`: `pool create`. */
export function commandKey(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/** Add each command's examples to its --help, after the options. */
export function addExamples(program: Command): void {
  const walk = (cmd: Command) => {
    const examples = EXAMPLES[commandKey(cmd)];
    if (examples) cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}`);
    for (const sub of cmd.commands) walk(sub);
  };
  walk(program);
}
