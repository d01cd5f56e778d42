import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * One seam between the controller and the page: the dashboard's answers are typed once, in src/protocol/
 * (dashboard.ts), and web/ reads them from there (docs/development.md). This reads web/'s syntax trees and finds
 * what retypes the contract: an `api(...)` request whose answer's type is missing, written out in place
 * (`api<{ jobs: ... }>`) or declared in web/ rather than imported from src/protocol/; an interface or type of
 * web/ named as one src/protocol/ exports; and types taken from elsewhere in src/ (the ledger's rows).
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every TypeScript file under `dir` of `root`, as paths relative to `root`. */
function sources(root: string, dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return sources(root, rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

const parse = (file: string, text: string) => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
const exported = (node: ts.Node) =>
  ts.canHaveModifiers(node) &&
  (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** The names src/protocol/ exports (types, classes, functions, constants). */
function protocolNames(root: string): Set<string> {
  const names = new Set<string>();
  for (const file of sources(root, 'src/protocol')) {
    for (const s of parse(file, fs.readFileSync(path.join(root, file), 'utf8')).statements) {
      if (
        (ts.isInterfaceDeclaration(s) ||
          ts.isTypeAliasDeclaration(s) ||
          ts.isClassDeclaration(s) ||
          ts.isFunctionDeclaration(s)) &&
        s.name &&
        exported(s)
      )
        names.add(s.name.text);
      else if (ts.isVariableStatement(s) && exported(s)) {
        for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name)) names.add(d.name.text);
      } else if (ts.isExportDeclaration(s) && s.exportClause && ts.isNamedExports(s.exportClause)) {
        for (const e of s.exportClause.elements) names.add(e.name.text);
      }
    }
  }
  return names;
}

/** What web/'s files retype of the contract (`file:line: what`), and how many api requests they make. */
function retypings(root: string): { found: string[]; requests: number } {
  const contract = protocolNames(root);
  const found: string[] = [];
  let requests = 0;
  for (const file of sources(root, 'web')) {
    const sf = parse(file, fs.readFileSync(path.join(root, file), 'utf8'));
    const at = (node: ts.Node, what: string) =>
      found.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${what}`);
    // The names this file imports from src/protocol/.
    const fromProtocol = new Set<string>();
    for (const s of sf.statements) {
      if (!ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier)) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), s.moduleSpecifier.text));
      if (!target.startsWith('src/')) continue;
      if (!target.startsWith('src/protocol/')) {
        at(s, `imports ${target}: the page takes the server's types from src/protocol/ only`);
        continue;
      }
      const bindings = s.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings))
        for (const e of bindings.elements) fromProtocol.add(e.name.text);
    }
    const visit = (node: ts.Node): void => {
      if (
        (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) &&
        contract.has(node.name.text)
      )
        at(node.name, `declares ${node.name.text}, which src/protocol/ exports: import it`);
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'api') {
        requests++;
        const answer = node.typeArguments?.[0];
        if (!answer) at(node, "api() without its answer's type: name it from src/protocol/dashboard.ts");
        else if (!ts.isTypeReferenceNode(answer) || !ts.isIdentifier(answer.typeName))
          at(
            answer,
            `api<${answer.getText(sf).replace(/\s+/g, ' ')}>: name the answer's type from src/protocol/dashboard.ts`,
          );
        else if (!fromProtocol.has(answer.typeName.text))
          at(
            answer,
            `api<${answer.typeName.text}>: ${answer.typeName.text} is not imported from src/protocol/`,
          );
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { found, requests };
}

test('the check finds a retyped contract in web/, and only there, on a planted tree', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-web-protocol-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    'src/protocol/dashboard.ts': [
      'export interface JobsAnswer { jobs: string[] }',
      'export type MeAnswer = { folder: string };',
      'export const UI = 1;',
    ].join('\n'),
    'src/protocol/other.ts': 'interface Hidden { a: 1 }\nexport type { Hidden };\n',
    'src/ledger/dashboard.ts': 'export interface JobOverview { name: string }\n',
    'web/good.ts': [
      "import type { JobsAnswer } from '../src/protocol/dashboard.js';",
      "import { STATES } from '../src/protocol/states.js';",
      "export const a = api<JobsAnswer>('/jobs');",
      'interface Local { n: number }',
    ].join('\n'),
    'web/views/old.ts': [
      "import type { JobOverview } from '../../src/ledger/dashboard.js';",
      "import type { MeAnswer } from '../../src/protocol/dashboard.js';",
      'interface JobsAnswer { jobs: JobOverview[] }',
      'type Hidden = number;',
      "const b = api<{ jobs: JobOverview[] }>('/jobs');",
      "const c = api('/me');",
      "const d = api<Local>('/x');",
      "const e = api<MeAnswer>('/me');",
    ].join('\n'),
  };
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), text);
  }
  const { found, requests } = retypings(dir);
  assert.equal(requests, 5);
  assert.deepEqual(found.sort(), [
    "web/views/old.ts:1: imports src/ledger/dashboard.js: the page takes the server's types from src/protocol/ only",
    'web/views/old.ts:3: declares JobsAnswer, which src/protocol/ exports: import it',
    'web/views/old.ts:4: declares Hidden, which src/protocol/ exports: import it',
    "web/views/old.ts:5: api<{ jobs: JobOverview[] }>: name the answer's type from src/protocol/dashboard.ts",
    "web/views/old.ts:6: api() without its answer's type: name it from src/protocol/dashboard.ts",
    'web/views/old.ts:7: api<Local>: Local is not imported from src/protocol/',
  ]);
});

test('web/ types every request by src/protocol/ and retypes none of it', () => {
  const { found, requests } = retypings(repo);
  // Not vacuous: the page's requests are there to check (me, login, logout, jobs, a job, tasks, a task, chart,
  // pools, cancel ×3, rerun-failed).
  assert.ok(requests >= 13, `only ${requests} api() requests found in web/: has the helper been renamed?`);
  assert.ok(protocolNames(repo).has('JobAnswer'), 'src/protocol/ exports no JobAnswer');
  assert.deepEqual(found, [], `type these by src/protocol/dashboard.ts:\n${found.join('\n')}`);
});
