import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * SQL lives in src/ledger/ (docs/development.md): no other file of src/ prepares a statement (`.stmt(`,
 * `.prepare(`), touches the ledger's database handle (`.db`: its `exec`, `pragma`, `transaction`...) or imports
 * better-sqlite3. dependency-cruiser sees imports, not calls, so this reads the sources: their syntax trees, so a
 * comment or a string that names `.stmt(` and a RegExp's `.exec(` do not count.
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Files allowed some SQL outside src/ledger/ for now, with how many findings each may have: none left (the
 * dashboard's one query, a pool's created_at, is findPool's now).
 */
const KNOWN: Readonly<Record<string, number>> = {};

/** Every source file under `dir` (TypeScript and JavaScript), as paths relative to `root`. */
function sources(root: string, dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return sources(root, rel);
    return /\.(ts|js|mjs|cjs)$/.test(e.name) ? [rel] : [];
  });
}

/** What one file does with the database outside the ledger: `line: what`, in file order. */
function findings(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (node: ts.Node, what: string) =>
    out.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ['stmt', 'prepare'].includes(node.expression.name.text)
    )
      at(node.expression.name, `.${node.expression.name.text}(`);
    else if (ts.isPropertyAccessExpression(node) && node.name.text === 'db')
      at(node.name, 'the database handle (.db)');
    else if (ts.isBindingElement(node) && (node.propertyName ?? node.name).getText(sf) === 'db')
      at(node, 'the database handle ({ db })');
    else if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      node.moduleSpecifier.text === 'better-sqlite3'
    )
      at(node, 'an import of better-sqlite3');
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The SQL of `root`/src outside src/ledger/, beyond the known exceptions: one line per finding. */
function sqlOutsideLedger(root: string, known: Readonly<Record<string, number>> = KNOWN): string[] {
  const out: string[] = [];
  for (const file of sources(root, 'src')) {
    if (file.startsWith('src/ledger/')) continue;
    const found = findings(file, fs.readFileSync(path.join(root, file), 'utf8'));
    if (found.length > (known[file] ?? 0)) out.push(...found);
  }
  for (const [file, n] of Object.entries(known)) {
    const abs = path.join(root, file);
    const found = fs.existsSync(abs) ? findings(file, fs.readFileSync(abs, 'utf8')).length : 0;
    if (found < n)
      out.push(`${file}: ${found} of its ${n} known finding(s) left: lower or remove its exception`);
  }
  return out;
}

test('the check finds SQL outside src/ledger/, and only there, on a planted tree', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-ledger-sql-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    'src/ledger/ok.ts':
      "import Database from 'better-sqlite3';\nexport const n = (l: any) => l.stmt('SELECT 1').get() ?? l.db.exec('');\n",
    'src/backends/x/reads.ts': [
      '// ledger.stmt( in a comment does not count',
      "const text = 'nor ledger.stmt( in a string';",
      'const m = /a/.exec(text);',
      'export const a = (ledger: any) =>',
      '  ledger',
      "    .stmt('SELECT 1')",
      '    .get();',
      "export const b = (ledger: any) => ledger.db.pragma('busy_timeout = 1');",
      'export const c = (db: any) => db.prepare(String(m));',
      'export const d = ({ db }: any) => db;',
    ].join('\n'),
    'src/cli/y.ts': "import type Database from 'better-sqlite3';\nexport type S = Database.Statement;\n",
    'src/controller/dashboard/routes.ts': "export const r = (l: any) => [l.stmt('a'), l.stmt('b')];\n",
    'src/launch/known.ts': 'export const k = 1;\n',
  };
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), text);
  }
  assert.deepEqual(sqlOutsideLedger(dir, { ...KNOWN, 'src/launch/known.ts': 1 }).sort(), [
    'src/backends/x/reads.ts:10: the database handle ({ db })',
    'src/backends/x/reads.ts:6: .stmt(',
    'src/backends/x/reads.ts:8: the database handle (.db)',
    'src/backends/x/reads.ts:9: .prepare(',
    'src/cli/y.ts:1: an import of better-sqlite3',
    'src/controller/dashboard/routes.ts:1: .stmt(',
    'src/controller/dashboard/routes.ts:1: .stmt(',
    'src/launch/known.ts: 0 of its 1 known finding(s) left: lower or remove its exception',
  ]);
});

test('drover’s own src/ has no SQL outside src/ledger/ but the known exceptions', () => {
  const found = sqlOutsideLedger(repo);
  assert.deepEqual(
    found,
    [],
    `move these into named functions of src/ledger/ (docs/development.md):\n${found.join('\n')}`,
  );
});

test('a launch writes its handles in one place: only src/launch/launch.ts calls setLaunchHandles', () => {
  const allowed = new Set(['src/ledger/launches.ts', 'src/launch/launch.ts']);
  const found: string[] = [];
  for (const file of sources(repo, 'src')) {
    if (allowed.has(file)) continue;
    const text = fs.readFileSync(path.join(repo, file), 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && node.text === 'setLaunchHandles')
        found.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  assert.deepEqual(
    found,
    [],
    `what reconciliation sees goes to setLaunchSightings; handles are the launch's:\n${found.join('\n')}`,
  );
});
