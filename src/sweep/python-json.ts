const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** Printable ASCII other than `"` and `\`: what needs no escape at all (most commands). */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * Encode a string as Python's `json.dumps` does by default (`ensure_ascii=True`): printable ASCII as is,
 * `"` `\` and `\b \f \n \r \t` as short escapes, and every other UTF-16 code unit (control characters, DEL,
 * non-ASCII, each half of a surrogate pair) as `\uXXXX` in lowercase hex.
 */
export function pythonJsonString(text: string): string {
  if (PLAIN.test(text)) return `"${text}"`;
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    const code = text.charCodeAt(i);
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (code >= 0x20 && code <= 0x7e) out += ch;
    else out += `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return `${out}"`;
}

/**
 * The keys of the top-level JSON object in `text`, in the order they are written (duplicates included).
 * `text` must already be known to be valid JSON whose top level is an object; JSON.parse cannot tell this
 * order, because it puts integer-like keys first in numeric order.
 */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let i = skipSpace(text, text.indexOf('{') + 1);
  while (i < text.length && text[i] !== '}') {
    const end = stringEnd(text, i);
    keys.push(JSON.parse(text.slice(i, end)) as string);
    i = skipSpace(text, skipSpace(text, end) + 1); // past ':'
    i = skipSpace(text, valueEnd(text, i));
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return keys;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && ' \t\n\r'.includes(text[i] ?? '')) i++;
  return i;
}

/** Index just past the string literal that starts at `i`. */
function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
  return j + 1;
}

/** Index just past the JSON value that starts at `i`. */
function valueEnd(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return stringEnd(text, i);
  if (first !== '[' && first !== '{') {
    let j = i;
    while (j < text.length && !',]} \t\n\r'.includes(text[j] ?? '')) j++;
    return j;
  }
  let depth = 0;
  let j = i;
  while (j < text.length) {
    const ch = text[j];
    if (ch === '"') {
      j = stringEnd(text, j);
      continue;
    }
    if (ch === '[' || ch === '{') depth++;
    if (ch === ']' || ch === '}') depth--;
    j++;
    if (depth === 0) return j;
  }
  return j;
}
