/**
 * A call of a command handed over loopback TCP by a bash shim (test/fakes/shim.bash to the fake schedulers'
 * server, test/helpers/drover-in-process-fake.bash to the in-process twin): NUL-separated fields, the program, the
 * caller's folder, the count of arguments, the arguments, then the caller's environment (`env -0`) and an empty
 * field. Its own module: main.js runs a program when imported.
 */

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
