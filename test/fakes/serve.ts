import fs from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { answerText, type Call, listenForCalls } from './call.js';
import { answer, load, PROGRAMS, type Program } from './main.js';
import { runControllersHere } from './submit.js';

/**
 * The FAKE schedulers' server of a test process (`main.js serve`): it answers the fake commands of the state
 * folders its test process names on its stdin (test/fakes/bin/*, through test/fakes/shim.bash) in one long-lived
 * process, so a call costs a bash and a cat rather than a Node start (~0.1 s of CPU; a conformance file makes
 * ~500 calls), and its test process's fakes share one start. It answers exactly as `node main.js PROG ARGS`
 * would: each call runs with the caller's environment (which names its state folder) and folder, one call at a
 * time (a call is synchronous). The controllers of the jobs it submits run here too, between calls (a Node start
 * each saved, ~0.3 s of CPU): scancel and qdel hand them their requests at once rather than through files.
 *
 * It listens on loopback TCP (bash opens /dev/tcp, not Unix sockets), writes its port to `DIR/server.port` of
 * each folder named once it listens, and stops listening when its stdin closes: the test process that started it
 * ended, however it ended.
 *
 * Its requests and answers are those of test/fakes/call.ts (parseCall, answerText).
 */

/** Run a call as its own process would: its environment and folder for the time of the call. */
function run(
  programs: Map<string, Program>,
  call: Call,
  home: string,
): { status: number; stdout: string; stderr: string } {
  const program = programs.get(call.prog);
  if (!program) return { status: 2, stdout: '', stderr: `FAKE scheduler: no fake program '${call.prog}'\n` };
  const env = process.env;
  try {
    process.chdir(call.cwd);
    process.env = call.env;
    return answer(program, call.prog, call.args);
  } catch (err) {
    const why = err instanceof Error ? (err.stack ?? err.message) : String(err);
    return { status: 70, stdout: '', stderr: `FAKE scheduler: ${why}\n` };
  } finally {
    process.env = env;
    process.chdir(home);
  }
}

/** Write the server's port into state folder `dir` (atomically: the shim reads it whole or not at all). */
function announce(dir: string, port: number): void {
  const file = path.join(dir, 'server.port');
  try {
    fs.writeFileSync(`${file}.tmp`, `${port}\n`);
    fs.renameSync(`${file}.tmp`, file);
  } catch {
    // the folder is gone: its test ended
  }
}

/**
 * Serve the fake commands of the state folders named on stdin, an absolute path a line (a test process's fakes
 * share one server: each call names its folder in its environment), until stdin closes: each folder gets its
 * `server.port` once the server listens. The controllers of the jobs submitted meanwhile run here too; the
 * process ends when the last of them has.
 */
export async function serve(): Promise<void> {
  runControllersHere();
  const programs = new Map<string, Program>();
  for (const prog of PROGRAMS) programs.set(prog, (await load(prog))!);
  const home = process.cwd();
  let replies = 0;
  const server = await listenForCalls((call) =>
    answerText(run(programs, call, home), () =>
      path.join(os.tmpdir(), `drover-fake-stderr-${process.pid}-${++replies}`),
    ),
  );
  const { port } = server.address() as net.AddressInfo;
  let rest = '';
  await new Promise<void>((resolve) => {
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (d: string) => {
      rest += d;
      for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
        const dir = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        if (path.isAbsolute(dir)) announce(dir, port);
      }
    });
    process.stdin.once('close', resolve);
    process.stdin.once('end', resolve);
  });
  server.close();
}
