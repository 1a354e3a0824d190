// The CEL subset on its own: what the shipped policies use evaluates as CEL does, errors are
// absorbed where CEL absorbs them, and what lies outside the subset does not compile.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CelAuthorizer, CelError, compileCel, type AuthorizerCheck, type CelValue } from './cel-subset.js';

const run = (source: string, vars: Record<string, CelValue> = {}, variables?: Record<string, string>): CelValue => {
  const names = Object.keys(variables ?? {});
  const variable = (name: string): CelValue => compileCel(variables?.[name] ?? '', Object.keys(vars), names).evaluate(vars, variable);
  return compileCel(source, Object.keys(vars), variables === undefined ? undefined : names).evaluate(vars, variable);
};

test('ternary, map literals, +, all() and exists() over lists and map keys, in on maps', () => {
  const labels = { a: '1', 'kubevirt.io/schedulable': 'true' };
  assert.deepEqual(run("has(o.labels) ? o.labels : {}", { o: { labels } }), labels);
  assert.deepEqual(run("has(o.labels) ? o.labels : {}", { o: {} }), {});
  assert.equal(run("'a' + 'b' + string", { string: 'c' }), 'abc');
  assert.equal(run('1 + 2 - 4'), -1);
  assert.equal(run("m.all(k, k == 'a' || k == 'kubevirt.io/schedulable')", { m: labels }), true);
  assert.equal(run("m.all(k, k == 'a')", { m: labels }), false);
  assert.equal(run('l.exists(v, has(v.hostDisk))', { l: [{ pvc: {} }, { hostDisk: {} }] }), true);
  assert.equal(run('l.exists(v, has(v.hostDisk))', { l: [] }), false);
  assert.equal(run("'a' in m && !('b' in m)", { m: labels }), true);
  // Map equality ignores key order.
  assert.equal(run('x == y', { x: { a: 1, b: [1, { c: 2 }] }, y: { b: [1, { c: 2 }], a: 1 } }), true);
});

test('errors: absorbed by all()/exists() and ||/&& where another operand decides, raised otherwise', () => {
  assert.equal(run('l.exists(v, v.x == 1)', { l: [{}, { x: 1 }] }), true);
  assert.throws(() => run('l.exists(v, v.x == 1)', { l: [{}, { x: 2 }] }), CelError);
  assert.equal(run('l.all(v, v.x == 1)', { l: [{}, { x: 2 }] }), false);
  assert.equal(run("r.operation == 'CREATE' || old.spec == 1", { r: { operation: 'CREATE' }, old: null }), true);
  assert.throws(() => run("r.operation == 'CREATE' || old.spec == 1", { r: { operation: 'UPDATE' }, old: null }), /no such key: spec/);
});

test('variables are lazy and may use the ones before them; an undeclared one does not compile', () => {
  assert.equal(run('variables.b', { o: { n: 'x' } }, { a: 'o.n', b: "variables.a + '!'" }), 'x!');
  assert.equal(run('true || variables.bad', { o: {} }, { bad: 'o.missing' }), true);
  assert.throws(() => run('variables.c', {}, { a: '1' }), /undefined field 'c'/);
  assert.throws(() => compileCel('variables.a', []), /undeclared reference to 'variables'/);
});

test('authorizer: the builder calls make one check; allowed() reads its answer', () => {
  const asked: AuthorizerCheck[] = [];
  const authorizer = new CelAuthorizer((check) => {
    asked.push(check);
    return check.verb === 'use';
  });
  const expression = "authorizer.group('kubevirt.io').resource('virtualmachineinstances').subresource('hostdisk').namespace(ns).check(verb).allowed()";
  assert.equal(run(expression, { authorizer, ns: 'vms', verb: 'use' }), true);
  assert.equal(run(expression, { authorizer, ns: 'vms', verb: 'get' }), false);
  assert.deepEqual(asked[0], { group: 'kubevirt.io', resource: 'virtualmachineinstances', subresource: 'hostdisk', namespace: 'vms', name: '', verb: 'use' });
  assert.throws(() => run("'x'.check('use')", {}), /authorizer's/);
});

test('outside the subset: no compile, naming what is unknown', () => {
  assert.throws(() => compileCel("object.metadata.name.matches('a')", ['object']), /undeclared reference to 'matches'/);
  assert.throws(() => compileCel('l.map(x, x)', ['l']), /undeclared reference to 'map'/);
  assert.throws(() => compileCel('int(1)', []), /undeclared reference to 'int'/);
  assert.throws(() => compileCel('a ? b', ['a', 'b']), /Syntax error/);
});
