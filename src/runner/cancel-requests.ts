import fs from 'node:fs';
import path from 'node:path';
import type { CancelRequest } from './group.js';

/**
 * Hand each cancel request the CLI dropped into `dir` since the last look to `each`, once: `seen` holds the
 * names already handled. A request that cannot be read yet (being written right now) is read on the next look.
 */
export function newCancelRequests(dir: string, seen: Set<string>, each: (req: CancelRequest) => void): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith('.json') || seen.has(name)) continue;
    seen.add(name);
    try {
      each(JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as CancelRequest);
    } catch {
      // A request being written right now is read on the next check.
      seen.delete(name);
    }
  }
}
