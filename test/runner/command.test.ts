import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import fc from 'fast-check';
import { commandArgv, directArgv, wrapCommand } from '../../src/runner/command.js';

test('plain words are executed directly, split on spaces', () => {
  assert.deepEqual(directArgv('python train.py --lr 0.1 --seed=3'), [
    'python',
    'train.py',
    '--lr',
    '0.1',
    '--seed=3',
  ]);
  assert.deepEqual(directArgv('  sleep   1  '), ['sleep', '1']);
  assert.deepEqual(directArgv('./run.sh a,b x:y +z @w 50%'), ['./run.sh', 'a,b', 'x:y', '+z', '@w', '50%']);
  assert.deepEqual(commandArgv('echo hi'), ['echo', 'hi']);
});

test('quotes a shell would only strip are taken literally, so the program itself runs', () => {
  assert.deepEqual(directArgv('echo "a b"'), ['echo', 'a b']);
  assert.deepEqual(directArgv("echo 'a'"), ['echo', 'a']);
  assert.deepEqual(directArgv("sh -c 'kill -9 $$'"), ['sh', '-c', 'kill -9 $$']);
  assert.deepEqual(directArgv(`python x.py --name 'a "b"' --x=''`), [
    'python',
    'x.py',
    '--name',
    'a "b"',
    '--x=',
  ]);
  assert.deepEqual(directArgv('a"b c"d'), ['ab cd']);
});

test('anything a shell would treat specially runs with /bin/sh -c', () => {
  for (const cmd of [
    'echo "$HOME"',
    'echo "a\\b"',
    'echo "unclosed',
    "echo 'unclosed",
    'echo $HOME',
    'echo a | cat',
    'a && b',
    'a; b',
    'a > out',
    'a < in',
    'ls *.txt',
    'ls file?',
    'ls [ab]',
    'echo ~',
    'echo a # comment',
    'echo `date`',
    'echo \\n',
    'a &',
    '(a)',
    '{ a; }',
    'echo\ta',
    'a\nb',
    'X=1 env',
    'cd /tmp',
    'export A=1',
    'exit 3',
    '. ./env.sh',
    'source env.sh',
    'if',
    'for',
    'while',
    'ulimit -n',
    'trap',
    'exec sleep 1',
    '',
    '   ',
  ]) {
    assert.equal(directArgv(cmd), null, JSON.stringify(cmd));
    assert.deepEqual(commandArgv(cmd), ['/bin/sh', '-c', cmd]);
  }
});

const WORD_CHARS = [...'abcXYZ0189_./:,+@%=^-'];

test('a command run directly gets the same words as sh would give it', () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: fc.constantFrom(...WORD_CHARS), minLength: 1, maxLength: 6 }), {
        minLength: 1,
        maxLength: 5,
      }),
      fc.integer({ min: 1, max: 3 }),
      (words, gap) => {
        const command = words.join(' '.repeat(gap));
        const argv = directArgv(command);
        if (argv === null) {
          // Only assignments and shell keywords in first position are refused.
          assert.ok(words[0]!.includes('=') || ['.', ':'].includes(words[0]!), command);
          return;
        }
        const shellWords = execFileSync('/bin/sh', ['-c', `printf '<%s>' ${command}`], { encoding: 'utf8' });
        assert.equal(argv.map((w) => `<${w}>`).join(''), shellWords, command);
      },
    ),
    { numRuns: 60 },
  );
});

test('wrapCommand keeps the command’s exit code through the footer', () => {
  assert.equal(wrapCommand('true'), 'true');
  const wrapped = wrapCommand("sh -c 'exit 7'", 'echo head', 'echo foot');
  let code = 0;
  let out = '';
  try {
    out = execFileSync('/bin/sh', ['-c', wrapped], { encoding: 'utf8' });
  } catch (err) {
    const e = err as { status: number; stdout: string };
    code = e.status;
    out = e.stdout;
  }
  assert.equal(code, 7);
  assert.equal(out, 'head\nfoot\n');
  const ok = execFileSync('/bin/sh', ['-c', wrapCommand('echo body', 'echo head', 'echo foot')], {
    encoding: 'utf8',
  });
  assert.equal(ok, 'head\nbody\nfoot\n');
});
