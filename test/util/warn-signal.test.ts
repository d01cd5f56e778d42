import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DroverError } from '../../src/errors.js';
import { formatWarnSignal, parseWarnSignal } from '../../src/util/warn-signal.js';
import { refuses } from '../helpers/refuses.js';

test('--signal: names with or without SIG in any case, times in s, m, h, bare seconds or H:MM:SS', () => {
  const p = (t: string) => parseWarnSignal(t);
  assert.deepEqual(p('USR1@5m'), { signal: 'SIGUSR1', seconds: 300 });
  assert.deepEqual(p('sigterm@90s'), { signal: 'SIGTERM', seconds: 90 });
  assert.deepEqual(p('Usr2@300'), { signal: 'SIGUSR2', seconds: 300 });
  assert.deepEqual(p('SIGINT@1h'), { signal: 'SIGINT', seconds: 3600 });
  assert.deepEqual(p('HUP@1:30:00'), { signal: 'SIGHUP', seconds: 5400 });
  assert.deepEqual(p('USR1@1.5m'), { signal: 'SIGUSR1', seconds: 90 });
  assert.equal(formatWarnSignal(p('USR1@300')), 'USR1@5m');
  assert.equal(formatWarnSignal(p('TERM@90')), 'TERM@90s');
});

test('--signal refuses hostile input with one line naming the value and what to do', () => {
  const p = (t: string) => () => parseWarnSignal(t);
  refuses(p('USR1'), /--signal 'USR1' has no '@': write SIG@TIME/);
  refuses(p(''), /--signal '' has no '@'/);
  refuses(p('USR1@'), /--signal 'USR1@' has no time after '@'/);
  refuses(p('@5m'), /--signal '@5m' has no signal before '@'/);
  refuses(p('KILL@1m'), /SIGKILL cannot be caught/);
  refuses(p('sigstop@1m'), /SIGSTOP cannot be caught/);
  refuses(p('USR1@-5'), /--signal 'USR1@-5': time '-5' is not a duration/);
  refuses(p('USR1@1e9'), /--signal 'USR1@1e9': time '1e9' is not a duration/);
  refuses(p('USR1@0'), /time '0' is out of range: give a duration from 1s to 365d/);
  refuses(p('USR1@99999999999999999999'), /is out of range/);
  refuses(p(`USR1@${'9'.repeat(400)}`), /is out of range/);
  refuses(p('USR1@366d'), /is out of range/);
  refuses(p('USR1@1.5'), /'1.5' is not whole seconds/);
  refuses(p('FOO@5m'), /'FOO' is not a signal: give a name such as USR1/);
  refuses(p('SIG@5m'), /'SIG' is not a signal/);
  refuses(p('10@5m'), /'10' is not a signal/);
  refuses(p('USR１@5m'), /'USR１' is not a signal/);
  refuses(p('ＵSR1@5m'), /is not a signal/);
  refuses(p('USR1@５m'), /is not a duration/);
  refuses(p('USR1\n@5m'), /'USR1\\n@5m'/);
  refuses(p('constructor@5m'), /'constructor' is not a signal/);
  refuses(p('__proto__@5m'), /'__proto__' is not a signal/);
  refuses(p('USR1@@5m'), /is not a signal/);
});

test('--signal: any text is a warning or one usage error, never anything else', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (t) => {
      try {
        const w = parseWarnSignal(t);
        assert.ok(Number.isInteger(w.seconds) && w.seconds >= 1);
        assert.deepEqual(parseWarnSignal(formatWarnSignal(w)), w);
      } catch (err) {
        assert.ok(err instanceof DroverError && err.exitCode === 2, String(err));
      }
    }),
  );
});
