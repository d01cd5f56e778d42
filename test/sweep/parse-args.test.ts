import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DroverError } from '../../src/errors.js';
import { parsePrelaunchArgs, prelaunchRequest, validateJobname } from '../../src/sweep/index.js';

const BASE = ['+command', 'echo', '+jobname', 'exp'];

/** Assert that parsing fails with a one-line usage error whose message matches. */
function rejects(argv: string[], message: RegExp) {
  assert.throws(
    () => parsePrelaunchArgs(argv),
    (err: unknown) => {
      assert.ok(err instanceof DroverError, 'a DroverError');
      assert.equal(err.code, 'usage');
      assert.equal(err.exitCode, 2);
      assert.ok(!err.message.includes('\n'), 'one line');
      assert.match(err.message, message);
      return true;
    },
  );
}

test('parses every option into the spec, with onager defaults', () => {
  const spec = parsePrelaunchArgs([
    ...'+jobname exp +command'.split(' '),
    'python train.py',
    ...'+arg --lr 0.1 0.2 +arg --verbose +pos-arg a b +flag --cuda +tag --run-tag +tag-args --lr'.split(' '),
    ...'+no-tag-number +arg-mode hydra +jobfile out/{jobname}.json +a +q'.split(' '),
  ]);
  assert.deepEqual(spec, {
    command: 'python train.py',
    jobname: 'exp',
    jobfile: 'out/{jobname}.json',
    argMode: 'hydra',
    args: [
      { name: '--lr', values: ['0.1', '0.2'] },
      { name: '--verbose', values: [] },
    ],
    posArgs: [['a', 'b']],
    flags: ['--cuda'],
    tag: '--run-tag',
    tagArgs: ['--lr'],
    noTagNumber: true,
    append: true,
    quiet: true,
  });
  assert.deepEqual(parsePrelaunchArgs(BASE), {
    command: 'echo',
    jobname: 'exp',
    argMode: 'argparse',
    args: [],
    posArgs: [],
    flags: [],
    noTagNumber: false,
    append: false,
    quiet: false,
  });
});

test('long aliases, +name=value, bare +tag and last-one-wins as in argparse', () => {
  const spec = parsePrelaunchArgs([
    '+command=echo',
    '+jobname=a',
    '+jobname',
    'b',
    '+append',
    '+quiet',
    '+tag',
    '+flag=--x',
  ]);
  assert.equal(spec.command, 'echo');
  assert.equal(spec.jobname, 'b');
  assert.equal(spec.append, true);
  assert.equal(spec.quiet, true);
  assert.equal(spec.tag, '--tag');
  assert.deepEqual(spec.flags, ['--x']);
  assert.equal(parsePrelaunchArgs([...BASE, '+tag=--t']).tag, '--t');
});

test('values may start with - or be a lone +, or a +word with a space', () => {
  const spec = parsePrelaunchArgs([...BASE, '+arg', '--shift', '-1', '-0.5', '+pos-arg', '+', '+a b']);
  assert.deepEqual(spec.args, [{ name: '--shift', values: ['-1', '-0.5'] }]);
  assert.deepEqual(spec.posArgs, [['+', '+a b']]);
});

test('mistyped or unknown options are usage errors (onager would silently ignore them)', () => {
  rejects([...BASE, '++append'], /unknown prelaunch option "\+\+append": did you mean \+append\?/);
  rejects([...BASE, '+apend'], /"\+apend": did you mean \+append\?/);
  rejects([...BASE, '+jobnam', 'x'], /"\+jobnam": write option names in full, e.g. \+jobname/);
  rejects([...BASE, '+t'], /e\.g\. \+tag or \+tag-args/);
  rejects([...BASE, '+arg', '--lr', '+5'], /"\+5" \(values cannot start with '\+'\)/);
  rejects([...BASE, '+exclude', '--lr', '1'], /unknown prelaunch option "\+exclude"/);
});

test('required options, missing values and stray values', () => {
  rejects(['+jobname', 'exp'], /^\+command is required; usage: drover prelaunch/);
  rejects(['+command', 'echo'], /^\+jobname is required/);
  rejects(['+command', '  ', '+jobname', 'exp'], /^\+command is empty/);
  rejects(['+jobname', 'exp', '+command'], /^\+command expects a value/);
  rejects(['+jobname', '+command', 'echo'], /^\+jobname expects a value/);
  rejects([...BASE, '+arg'], /^\+arg expects at least one value/);
  rejects([...BASE, '+pos-arg', '+q'], /^\+pos-arg expects at least one value/);
  rejects([...BASE, '+tag-args'], /^\+tag-args expects at least one value/);
  rejects(
    ['+command', 'python', 'train.py', '+jobname', 'exp'],
    /unexpected value "train.py" after \+command: quote/,
  );
  rejects([...BASE, '+flag', '--a', '--b'], /unexpected value "--b" after \+flag: \+flag takes one flag/);
  rejects([...BASE, '+q', 'x'], /unexpected value "x" after \+q: \+q takes no value/);
  rejects(['echo', ...BASE], /unexpected value "echo" before any option/);
  rejects([...BASE, '+pos-arg', 'a', '--', 'b'], /bare '--'/);
});

test('option values that are wrong', () => {
  rejects([...BASE, '+arg-mode', 'yaml'], /^\+arg-mode "yaml" is not a mode; use argparse or hydra$/);
  rejects([...BASE, '+tag='], /^\+tag is empty/);
  rejects([...BASE, '+q=1'], /\+q=1: \+q takes no value/);
  rejects([...BASE, '+arg=--lr', '1'], /\+arg takes its values as separate words/);
  rejects([...BASE, '+jobfile', 'x/{job}.json'], /\+jobfile "x\/\{job\}.json" has placeholder "\{job\}"/);
  rejects([...BASE, '+jobfile', ''], /\+jobfile is empty/);
  rejects([...BASE, '+h'], /\+h asks for help/);
});

test('jobname rule: letters, digits and _ - . +, not starting with . - or +, no ..', () => {
  for (const ok of ['exp', 'experiment1', 'mnist_lr_bs', 'test-eqw', 'exp_01', 'a.b+c-d', '_x', '9lives']) {
    assert.equal(validateJobname(ok), ok);
  }
  const bad: Array<[string, RegExp]> = [
    ['', /\+jobname is empty/],
    ['a/b', /"a\/b" has a character that is not allowed/],
    ['a b', /not allowed/],
    ['a\tb', /not allowed/],
    ['a\u0001b', /not allowed/],
    ['é', /not allowed/],
    ['.hidden', /starts with "\."/],
    ['-x', /starts with "-"/],
    ['+x', /starts with "\+"/],
    ['a..b', /contains "\.\."/],
    ['x'.repeat(129), /longer than 128/],
  ];
  for (const [name, message] of bad) rejects(['+command', 'echo', `+jobname=${name}`], message);
  rejects(['+command', 'echo', '+jobname', '..'], /starts with "\."/);
  rejects(['+command', 'echo', '+jobname', 'a/../b'], /letters, digits and _ - \. \+/);
});

test('prelaunchRequest: help and version only where an option belongs, never as a sweep value', () => {
  assert.equal(prelaunchRequest(['+h']), 'help');
  assert.equal(prelaunchRequest([...BASE, '++help']), 'help');
  assert.equal(prelaunchRequest(['--help']), 'help');
  assert.equal(prelaunchRequest(['-h']), 'help');
  assert.equal(prelaunchRequest([...BASE, '--help']), 'help');
  assert.equal(prelaunchRequest(['-V']), 'version');
  assert.equal(prelaunchRequest([...BASE, '--version']), 'version');
  assert.equal(prelaunchRequest(BASE), undefined);
  // Values of the sweep's options are the user's, whatever they look like.
  for (const sweep of [
    ['+flag', '--help'],
    ['+flag', '-h'],
    ['+arg', '--version', '1', '2'],
    ['+arg', '--lr', '-V', '--help'],
    ['+pos-arg', '-V'],
    ['+pos-arg', 'a', '--help', '-h'],
    ['+tag', '--help'],
    ['+tag-args', '--help'],
    ['+jobfile', '--version'],
  ]) {
    assert.equal(prelaunchRequest([...BASE, ...sweep]), undefined, sweep.join(' '));
  }
  assert.equal(prelaunchRequest(['+command', '--help', '+jobname', 'j']), undefined);
  assert.equal(prelaunchRequest(['+command', '-V', '+jobname', 'j']), undefined);
});
