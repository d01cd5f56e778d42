import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { answer, load, PROGRAMS, type Program } from './main.js';

/**
 * The FAKE schedulers' server of one state folder (`main.js serve DIR`): it answers the fake commands of that
 * folder (test/fakes/bin/*, through test/fakes/shim.bash) in one long-lived process, so a call costs a bash and a
 * cat rather than a Node start (~0.1 s of CPU; a conformance file makes ~500 calls). It answers exactly as
 * `node main.js PROG ARGS` would: each call runs with the caller's environment and folder, one call at a time
 * (a call is synchronous: scancel waits for the job's controller, a process of its own, never for the server).
 *
 * It listens on loopback TCP (bash opens /dev/tcp, not Unix sockets), writes its port to `DIR/server.port` once
 * it listens, and exits when its stdin closes: the test that started it ended, however it ended.
 *
 * A request is NUL-separated: PROG, the caller's folder, the count of arguments, the arguments, then the
 * caller's environment (`env -0`) and an empty field. The answer is a line `STATUS ERRFILE` (ERRFILE `-` when
 * stderr is empty, else a file the shim prints to stderr and removes), then stdout to the end of the connection.
 */

/** A request, once whole. */
interface Call {
  prog: string;
  cwd: string;
  args: string[];
  env: Record<string, string>;
}

/** The call in `data` if it is whole (fields up to an empty one after the arguments), else undefined. */
export function parseCall(data: Buffer): Call | undefined {
  const fields: string[] = [];
  let from = 0;
  for (let i = data.indexOf(0, from); i >= 0; i = data.indexOf(0, from)) {
    fields.push(data.subarray(from, i).toString('utf8'));
    from = i + 1;
    if (fields.length >= 3) {
      const argc = Number(fields[2]);
      const envFrom = 3 + argc;
      if (fields.length > envFrom && fields[fields.length - 1] === '') {
        const env: Record<string, string> = {};
        for (const kv of fields.slice(envFrom, -1)) {
          const eq = kv.indexOf('=');
          if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
        }
        return { prog: fields[0]!, cwd: fields[1]!, args: fields.slice(3, envFrom), env };
      }
    }
  }
  return undefined;
}

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

/** Serve the fake commands of state folder `dir` until stdin closes. */
export async function serve(dir: string): Promise<void> {
  const programs = new Map<string, Program>();
  for (const prog of PROGRAMS) programs.set(prog, (await load(prog))!);
  const home = process.cwd();
  let replies = 0;
  const server = net.createServer((sock) => {
    const chunks: Buffer[] = [];
    sock.on('error', () => {});
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      const call = parseCall(Buffer.concat(chunks));
      if (!call) return;
      sock.pause();
      const a = run(programs, call, home);
      let errFile = '-';
      if (a.stderr !== '') {
        errFile = path.join(dir, `server.err.${++replies}`);
        fs.writeFileSync(errFile, a.stderr);
      }
      sock.end(`${a.status} ${errFile}\n${a.stdout}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  const file = path.join(dir, 'server.port');
  fs.writeFileSync(`${file}.tmp`, `${port}\n`);
  fs.renameSync(`${file}.tmp`, file);
  await new Promise<void>((resolve) => {
    process.stdin.on('data', () => {});
    process.stdin.once('close', resolve);
    process.stdin.once('end', resolve);
  });
  fs.rmSync(file, { force: true });
  server.close();
}
