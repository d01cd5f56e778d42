import { usageError } from '../errors.js';

/** Where a job's jobfile lives unless `+jobfile` says otherwise (onager: `.onager/scripts/{jobname}/jobs.json`). */
export const DEFAULT_JOBFILE = '.drover/jobs/{jobname}/jobs.json';

const HELP = 'write {jobname} for the job name and {{ or }} for a literal brace';

/**
 * Fill a `+jobfile` template as onager does with Python's `str.format(jobname=...)`: `{jobname}` becomes the
 * jobname, `{{` and `}}` become single braces; any other placeholder or a lone brace is a usage error.
 */
export function jobfilePath(template: string, jobname: string): string {
  if (template.length === 0) throw usageError(`+jobfile is empty; give a path, e.g. ${DEFAULT_JOBFILE}`);
  let out = '';
  let i = 0;
  while (i < template.length) {
    const ch = template[i];
    const next = template[i + 1];
    if ((ch === '{' && next === '{') || (ch === '}' && next === '}')) {
      out += ch;
      i += 2;
    } else if (ch === '{') {
      const close = template.indexOf('}', i);
      const field = close < 0 ? '' : template.slice(i + 1, close);
      if (field !== 'jobname') {
        const shown = close < 0 ? template.slice(i) : `{${field}}`;
        throw usageError(
          `+jobfile ${JSON.stringify(template)} has placeholder ${JSON.stringify(shown)}; ${HELP}`,
        );
      }
      out += jobname;
      i = close + 1;
    } else if (ch === '}') {
      throw usageError(`+jobfile ${JSON.stringify(template)} has a lone '}'; ${HELP}`);
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}
