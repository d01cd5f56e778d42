/**
 * The layers of src/ (docs/development.md): imports point down only, and nothing outside src/cli imports it.
 *   cli → launch, controller, worker → backends → runner, ledger → sweep, tasklist, protocol, util (and the
 *   shared leaves: config, errors, files, paths)
 * `npm run lint` runs this; a violation fails CI.
 */
const BASE = '^src/(sweep|tasklist|protocol|util|config)/|^src/(errors|files|paths)\\.ts$';
const CORE = '^src/(runner|ledger)/';
const BACKENDS = '^src/backends/';
const USE_CASES = '^src/(launch|controller|worker)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle: modules that need each other are one module, or share a lower one.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'cli-is-the-top',
      comment: 'Only src/cli/ imports src/cli/: the library does not print or parse flags.',
      severity: 'error',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'controller-and-worker-apart',
      comment: 'The controller and the worker share only src/protocol/ (they run on different hosts).',
      severity: 'error',
      from: { path: '^src/controller/' },
      to: { path: '^src/worker/' },
    },
    {
      name: 'worker-and-controller-apart',
      severity: 'error',
      from: { path: '^src/worker/' },
      to: { path: '^src/(controller|launch)/' },
    },
    {
      name: 'launch-below-its-callers',
      comment: 'The launch library is used by the CLI and the controller; it uses neither.',
      severity: 'error',
      from: { path: '^src/launch/' },
      to: { path: '^src/(controller|worker)/' },
    },
    {
      name: 'backends-below-use-cases',
      severity: 'error',
      from: { path: BACKENDS },
      to: { path: USE_CASES },
    },
    {
      name: 'core-below-backends',
      comment: 'The runner and the ledger know no backend, use case or each other.',
      severity: 'error',
      from: { path: CORE },
      to: { path: [BACKENDS, USE_CASES] },
    },
    {
      name: 'ledger-not-runner',
      severity: 'error',
      from: { path: '^src/ledger/' },
      to: { path: '^src/runner/' },
    },
    {
      name: 'runner-not-ledger',
      comment: 'Runners never write the database (they run on compute nodes).',
      severity: 'error',
      from: { path: '^src/runner/' },
      to: { path: '^src/ledger/' },
    },
    {
      name: 'base-is-the-bottom',
      severity: 'error',
      from: { path: BASE },
      to: { path: [CORE, BACKENDS, USE_CASES] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
