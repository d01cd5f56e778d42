import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Where a launch runs is one text, `pool:NAME` for a pool, and src/protocol/backend-ref.ts alone reads and writes
 * that form (issue 33 §2): no other file of src/ holds `pool:` in a string, a template or a RegExp. Comments may
 * name it. Read from the syntax trees.
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const HOME = 'src/protocol/backend-ref.ts';

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(repo, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return sources(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** The places of a file that spell `pool:` in code. */
export function poolSpellings(file: string, text: string): number[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const visit = (node: ts.Node): void => {
    const t =
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isRegularExpressionLiteral(node)
        ? node.text
        : ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)
          ? node.text
          : undefined;
    // The form itself: a text that begins with it, a RegExp or a SQL pattern of it (not English: "a pool: ...").
    const spelt =
      t !== undefined &&
      (ts.isRegularExpressionLiteral(node) ? t.includes('pool:') : /^pool:|'pool:%'/.test(t));
    if (spelt) lines.push(sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return lines;
}

test('the check finds `pool:` in strings, templates and RegExps, not in comments', () => {
  const text = [
    '// backend `pool:NAME` in a comment is fine',
    "const a = 'pool:' + name;",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal as the checked source text
    'const b = `pool:${name}`;',
    'const c = x.replace(/^pool:/, "");',
    'const d = db.stmt("SELECT * FROM launches WHERE backend LIKE \'pool:%\'");',
    "const e = 'run tasks of a pool: register with the server';",
  ].join('\n');
  assert.deepEqual(poolSpellings('x.ts', text), [2, 3, 4, 5]);
});

test('only src/protocol/backend-ref.ts spells `pool:` in src/', () => {
  const found: string[] = [];
  for (const file of sources('src')) {
    if (file === HOME) continue;
    const lines = poolSpellings(file, fs.readFileSync(path.join(repo, file), 'utf8'));
    found.push(...lines.map((l) => `${file}:${l}`));
  }
  assert.deepEqual(
    found,
    [],
    `ask ${HOME} (poolOf, poolRef, backendFlag, backendArgv) instead:\n${found.join('\n')}`,
  );
});
