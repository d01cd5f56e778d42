/** One line in words for a request body that failed its schema, naming the field (from Ajv's first error). */

/** The part of an Ajv error this reads. */
export interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);

/** `/batches/0/records/2/task` → `batches[0].records[2].task`. */
function fieldName(instancePath: string): string {
  let out = '';
  for (const part of instancePath.split('/').slice(1)) {
    const p = part.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  }
  return out;
}

function typeWords(t: unknown): string {
  const types = Array.isArray(t) ? (t as string[]) : [String(t)];
  return types.map((x) => (x === 'null' ? 'null' : article(x))).join(' or ');
}

/** Describe a schema error in words: what is wrong with which field, e.g. `'num_jobs' must be at most 10000000`. */
export function describeSchemaError(e: SchemaError, what = 'the request body'): string {
  const field = fieldName(e.instancePath);
  const at = (name: string) => `'${field === '' ? name : `${field}.${name}`}'`;
  const f = `'${field}'`;
  const p = e.params;
  switch (e.keyword) {
    case 'required':
      return `${at(String(p.missingProperty))} is missing`;
    case 'additionalProperties':
      return `${at(String(p.additionalProperty))} is not a field of ${field === '' ? what : f}: leave it out`;
    case 'type':
      return `${field === '' ? what : f} must be ${typeWords(p.type)}`;
    case 'maximum':
      return `${f} must be at most ${p.limit}`;
    case 'minimum':
      return `${f} must be at least ${p.limit}`;
    case 'exclusiveMaximum':
      return `${f} must be less than ${p.limit}`;
    case 'exclusiveMinimum':
      return `${f} must be more than ${p.limit}`;
    case 'maxLength':
      return `${f} is too long: at most ${p.limit} characters`;
    case 'minLength':
      return p.limit === 1 ? `${f} must not be empty` : `${f} must have at least ${p.limit} characters`;
    case 'maxItems':
      return `${f} has too many items: at most ${p.limit}`;
    case 'minItems':
      return `${f} must have at least ${p.limit} items`;
    case 'maxProperties':
      return `${f} has too many fields: at most ${p.limit}`;
    case 'enum':
      return `${f} must be one of: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${f} must be ${JSON.stringify(p.allowedValue)}`;
    case 'pattern':
      return `${f} is not in the expected form (${p.pattern})`;
    case 'discriminator':
      return `${at(String(p.tag))} must be one of the record types (start, end, skip)`;
    default:
      return `${field === '' ? what : f} ${e.message ?? 'is not valid'}`;
  }
}
