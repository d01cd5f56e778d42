import assert from 'node:assert/strict';
import { test } from 'node:test';
import AjvCompiler from '@fastify/ajv-compiler';
import { AJV_OPTIONS } from '../../src/controller/http.js';
import { type BuildValidator, lazyValidators } from '../../src/controller/lazy-validators.js';
import * as schemas from '../../src/controller/schemas.js';

const route = (schema: unknown) => ({ schema, method: 'POST', url: '/x', httpPart: 'body' });

test('a route schema is compiled on its first validation, once, and Ajv’s errors come with a refusal', () => {
  const built: unknown[] = [];
  const compiled: unknown[] = [];
  const real = AjvCompiler() as unknown as BuildValidator;
  const counting: BuildValidator = (ext, opts) => {
    built.push(opts);
    const compiler = real(ext, opts);
    return (r) => {
      compiled.push(r.schema);
      return compiler(r);
    };
  };
  const compiler = lazyValidators(counting)({}, AJV_OPTIONS);
  const a = compiler(route({ type: 'object', required: ['n'], properties: { n: { type: 'integer' } } }));
  const b = compiler(route({ type: 'string' }));
  assert.deepEqual([built.length, compiled.length], [0, 0], 'nothing compiled before a request');

  assert.equal(a({ n: 'x' }), false);
  assert.match(JSON.stringify(a.errors), /must be integer/);
  assert.deepEqual([built.length, compiled.length], [1, 1], 'only the schema asked for');
  assert.equal(a({ n: 1 }), true);
  assert.equal(a.errors, null, 'no errors left from the refusal before');
  assert.equal(a({}), false);
  assert.match(JSON.stringify(a.errors), /must have required property 'n'/);
  assert.equal(compiled.length, 1, 'compiled once');

  assert.equal(b('s'), true);
  assert.deepEqual([built.length, compiled.length], [1, 2], 'one Ajv for the server, a compile per schema');
});

test('every body schema of the server (schemas.ts) compiles with the server’s Ajv options (nothing waits for a request)', () => {
  const compiler = (AjvCompiler() as unknown as BuildValidator)({}, AJV_OPTIONS);
  const all = Object.entries(schemas).filter(([, s]) => typeof s === 'object' && s !== null);
  assert.ok(all.length >= 11, `the schemas of src/controller/schemas.ts (${all.map(([n]) => n).join(', ')})`);
  for (const [name, schema] of all) {
    const validate = compiler(route(schema));
    assert.equal(typeof validate, 'function', name);
    assert.equal(validate('not an object'), false, `${name} refuses a string body`);
  }
});
