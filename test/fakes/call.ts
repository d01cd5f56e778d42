/**
 * A call of a command handed over loopback TCP by a bash shim (test/fakes/shim.bash to the fake schedulers'
 * server, test/helpers/drover-in-process-fake.bash to the in-process twin): NUL-separated fields, the program, the
 * caller's folder, the count of arguments, the arguments, then the caller's environment (`env -0`) and an empty
 * field. Its own module: main.js runs a program when imported.
 */

import fs from 'node:fs';
import net from 'node:net';

/** A request, once whole. */
export interface Call {
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

/** How a call ended: what the shim prints and the code it exits with. */
export interface CallResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * The answer to a call, as the shims read it: a line `STATUS ERRFILE` (ERRFILE `-` when stderr is empty, else a
 * file, named by `errFile`, holding it, which the shim prints to stderr and removes), then stdout.
 */
export function answerText(r: CallResult, errFile: () => string): string {
  let file = '-';
  if (r.stderr !== '') {
    file = errFile();
    fs.writeFileSync(file, r.stderr);
  }
  return `${r.status} ${file}\n${r.stdout}`;
}

/**
 * Listen on loopback TCP (a port of its own) for calls: each connection's call, once whole, is answered with the
 * text `answer` gives (made in the turn the call completed when it is not a promise), and the connection ends.
 */
export async function listenForCalls(answer: (call: Call) => string | Promise<string>): Promise<net.Server> {
  const server = net.createServer((sock) => {
    const chunks: Buffer[] = [];
    sock.on('error', () => {});
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      const call = parseCall(Buffer.concat(chunks));
      if (!call) return;
      sock.pause();
      Promise.resolve(answer(call)).then(
        (text) => sock.end(text),
        (err: unknown) =>
          sock.end(`70 -\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return server;
}
