// The part of CEL that admission webhooks' `matchConditions` and ValidatingAdmissionPolicies
// need here: literals, lists and maps, field selection and indexing, `!`, `-`, `+`, `&&`, `||`,
// `? :`, comparisons, `in`, `has()`, `size()`, the string methods `startsWith`, `endsWith`,
// `contains`, the macros `all` and `exists`, a policy's `variables`, and the `authorizer` library
// (`group`, `resource`, `subresource`, `namespace`, `name`, `check`, `allowed`). An expression
// outside this subset is refused when the configuration is written (as kube-apiserver refuses one
// that does not compile), so no condition is ever silently taken as true.

export type CelValue = string | number | boolean | null | CelValue[] | { [key: string]: CelValue } | CelAuthorizer | CelDecision;

/** One question to the authorizer (kube-apiserver's authorizer.Attributes of a resource request). */
export interface AuthorizerCheck {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

/** The `authorizer` variable, and the request it builds up (`authorizer.group(…).resource(…)…`). */
export class CelAuthorizer {
  constructor(
    readonly decide: (check: AuthorizerCheck) => boolean,
    readonly check: Omit<AuthorizerCheck, 'verb'> = { group: '', resource: '', subresource: '', namespace: '', name: '' },
  ) {}
}

/** What `check(verb)` returns. */
export class CelDecision {
  constructor(readonly allowed: boolean) {}
}

type Node =
  | { t: 'lit'; v: CelValue }
  | { t: 'ident'; name: string }
  | { t: 'list'; items: Node[] }
  | { t: 'map'; entries: Array<[Node, Node]> }
  | { t: 'select'; of: Node; field: string }
  | { t: 'variable'; name: string }
  | { t: 'index'; of: Node; key: Node }
  | { t: 'call'; name: string; target: Node | undefined; args: Node[] }
  | { t: 'macro'; name: 'all' | 'exists'; of: Node; iter: string; body: Node }
  | { t: 'unary'; op: '!' | '-'; arg: Node }
  | { t: 'binary'; op: string; left: Node; right: Node }
  | { t: 'cond'; test: Node; then: Node; else: Node };

export class CelError extends Error {
  override readonly name = 'CelError';
  readonly code = 'TESTBED_CEL_ERROR';
}

const functions = new Set(['has', 'size']);
const authorizerMethods = ['group', 'resource', 'subresource', 'namespace', 'name', 'check', 'allowed'];
const methods = new Set(['startsWith', 'endsWith', 'contains', 'size', ...authorizerMethods]);
const macros = new Set(['all', 'exists']);

/** A compiled expression; `variables` are the names it may use. */
export interface CelProgram {
  /** `variable` gives the value of `variables.NAME` (a policy's variables, evaluated lazily). */
  evaluate(vars: Readonly<Record<string, CelValue>>, variable?: (name: string) => CelValue): CelValue;
}

/**
 * Compiles `source`; it may use the identifiers `variables` and, when `policyVariables` is given,
 * `variables.NAME` for each of those names (a ValidatingAdmissionPolicy's `spec.variables`).
 */
export function compileCel(source: string, variables: readonly string[], policyVariables?: readonly string[]): CelProgram {
  const tokens = tokenize(source);
  const scope: string[] = [...variables];
  let pos = 0;
  const peek = (): string | undefined => tokens[pos];
  const take = (expected?: string): string => {
    const tok = tokens[pos];
    if (tok === undefined || (expected !== undefined && tok !== expected)) {
      throw new CelError(`Syntax error: expected ${expected ?? 'an expression'} at ${tok === undefined ? 'end of input' : `'${tok}'`}`);
    }
    pos += 1;
    return tok;
  };
  const binaryLevel = (ops: readonly string[], next: () => Node) => (): Node => {
    let left = next();
    while (ops.includes(peek() ?? '')) {
      const op = take();
      left = { t: 'binary', op, left, right: next() };
    }
    return left;
  };
  const args = (): Node[] => {
    const list: Node[] = [];
    take('(');
    while (peek() !== ')') {
      list.push(expr());
      if (peek() !== ')') take(',');
    }
    take(')');
    return list;
  };
  const primary = (): Node => {
    const tok = take();
    if (tok === '(') {
      const inner = expr();
      take(')');
      return inner;
    }
    if (tok === '[') {
      const items: Node[] = [];
      while (peek() !== ']') {
        items.push(expr());
        if (peek() !== ']') take(',');
      }
      take(']');
      return { t: 'list', items };
    }
    if (tok === '{') {
      const entries: Array<[Node, Node]> = [];
      while (peek() !== '}') {
        const key = expr();
        take(':');
        entries.push([key, expr()]);
        if (peek() !== '}') take(',');
      }
      take('}');
      return { t: 'map', entries };
    }
    if (tok.startsWith("'") || tok.startsWith('"')) return { t: 'lit', v: JSON.parse(`"${tok.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"')}"`) as string };
    if (/^[0-9]/.test(tok)) return { t: 'lit', v: Number(tok) };
    if (tok === 'true' || tok === 'false') return { t: 'lit', v: tok === 'true' };
    if (tok === 'null') return { t: 'lit', v: null };
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tok)) throw new CelError(`Syntax error: unexpected '${tok}'`);
    if (peek() === '(') {
      if (!functions.has(tok)) throw new CelError(`undeclared reference to '${tok}' (this testbed's CEL knows ${[...functions].join(', ')})`);
      return { t: 'call', name: tok, target: undefined, args: args() };
    }
    if (tok === 'variables' && policyVariables !== undefined && !scope.includes(tok)) {
      take('.');
      const name = take();
      if (!policyVariables.includes(name)) throw new CelError(`undefined field '${name}' (the policy declares no such variable before this one)`);
      return { t: 'variable', name };
    }
    if (!scope.includes(tok)) throw new CelError(`undeclared reference to '${tok}'`);
    return { t: 'ident', name: tok };
  };
  const macro = (name: 'all' | 'exists', of: Node): Node => {
    take('(');
    const iter = take();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(iter)) throw new CelError(`${name}() takes an identifier first, as ${name}(x, predicate)`);
    take(',');
    scope.push(iter);
    const body = expr();
    scope.pop();
    take(')');
    return { t: 'macro', name, of, iter, body };
  };
  const member = (): Node => {
    let node = primary();
    for (;;) {
      if (peek() === '.') {
        take();
        const field = take();
        if (peek() === '(') {
          if (field === 'all' || field === 'exists') node = macro(field, node);
          else if (!methods.has(field)) throw new CelError(`undeclared reference to '${field}' (this testbed's CEL knows ${[...methods, ...macros].join(', ')})`);
          else node = { t: 'call', name: field, target: node, args: args() };
        } else node = { t: 'select', of: node, field };
      } else if (peek() === '[') {
        take();
        node = { t: 'index', of: node, key: expr() };
        take(']');
      } else return node;
    }
  };
  const unary = (): Node => {
    const tok = peek();
    if (tok === '!' || tok === '-') {
      take();
      return { t: 'unary', op: tok, arg: unary() };
    }
    return member();
  };
  const additive = binaryLevel(['+', '-'], unary);
  const relation = binaryLevel(['==', '!=', '<', '<=', '>', '>=', 'in'], additive);
  const and = binaryLevel(['&&'], relation);
  const or = binaryLevel(['||'], and);
  function expr(): Node {
    const test = or();
    if (peek() !== '?') return test;
    take('?');
    const then = or();
    take(':');
    return { t: 'cond', test, then, else: expr() };
  }
  const root = expr();
  if (pos !== tokens.length) throw new CelError(`Syntax error: unexpected '${tokens[pos] ?? ''}'`);
  return {
    evaluate: (vars, variable = (name) => {
      throw new CelError(`no such variable: ${name}`);
    }) => evaluate(root, { vars, variable }),
  };
}

function tokenize(source: string): string[] {
  const re = /\s*(?:('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|([0-9]+(?:\.[0-9]+)?)|(==|!=|<=|>=|&&|\|\||[()[\]{}.,:?!<>+-])|([A-Za-z_][A-Za-z0-9_]*))/y;
  const tokens: string[] = [];
  let at = 0;
  while (at < source.length) {
    if (/^\s*$/.test(source.slice(at))) break;
    re.lastIndex = at;
    const m = re.exec(source);
    if (m === null) throw new CelError(`Syntax error: unexpected character at ${at}: '${source.slice(at).trimStart()[0] ?? ''}'`);
    tokens.push(m[1] ?? m[2] ?? m[3] ?? m[4] ?? '');
    at = re.lastIndex;
  }
  return tokens;
}

function isMap(v: CelValue): v is { [key: string]: CelValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof CelAuthorizer) && !(v instanceof CelDecision);
}

/** CEL equality: lists by element, maps by key whatever their order. */
function equal(a: CelValue, b: CelValue): boolean {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => equal(v, b[i] ?? null));
  if (isMap(a)) {
    if (!isMap(b) || Object.keys(a).length !== Object.keys(b).length) return false;
    return Object.keys(a).every((k) => Object.hasOwn(b, k) && equal(a[k] ?? null, b[k] ?? null));
  }
  return a === b;
}

interface Env {
  readonly vars: Readonly<Record<string, CelValue>>;
  readonly variable: (name: string) => CelValue;
}

function evaluate(node: Node, env: Env): CelValue {
  const ev = (n: Node): CelValue => evaluate(n, env);
  switch (node.t) {
    case 'lit': return node.v;
    case 'ident': return env.vars[node.name] ?? null;
    case 'variable': return env.variable(node.name);
    case 'list': return node.items.map(ev);
    case 'map': {
      const map: { [key: string]: CelValue } = {};
      for (const [k, v] of node.entries) {
        const key = ev(k);
        if (typeof key !== 'string') throw new CelError('unsupported key type: this testbed\'s CEL has string map keys only');
        map[key] = ev(v);
      }
      return map;
    }
    case 'cond': {
      const test = ev(node.test);
      if (typeof test !== 'boolean') throw new CelError("no such overload: '_?_:_' on a non-bool");
      return test ? ev(node.then) : ev(node.else);
    }
    case 'macro': return macro(node, env);
    case 'select': {
      const of = ev(node.of);
      if (!isMap(of) || !(node.field in of)) throw new CelError(`no such key: ${node.field}`);
      return of[node.field] ?? null;
    }
    case 'index': {
      const of = ev(node.of);
      const key = ev(node.key);
      if (Array.isArray(of) && typeof key === 'number') {
        if (key < 0 || key >= of.length) throw new CelError(`index out of bounds: ${key}`);
        return of[key] ?? null;
      }
      if (isMap(of) && typeof key === 'string' && key in of) return of[key] ?? null;
      throw new CelError(`no such key: ${JSON.stringify(key)}`);
    }
    case 'call': return call(node, ev);
    case 'unary': {
      const v = ev(node.arg);
      if (node.op === '!') {
        if (typeof v !== 'boolean') throw new CelError("no such overload: '!' on a non-bool");
        return !v;
      }
      if (typeof v !== 'number') throw new CelError("no such overload: '-' on a non-number");
      return -v;
    }
    case 'binary': return binary(node, ev);
  }
}

/** `all` and `exists` over a list's elements or a map's keys; an error is absorbed when another element decides. */
function macro(node: Extract<Node, { t: 'macro' }>, env: Env): CelValue {
  const of = evaluate(node.of, env);
  const elements = Array.isArray(of) ? of : isMap(of) ? Object.keys(of) : undefined;
  if (elements === undefined) throw new CelError(`no such overload: ${node.name}() on a value that is neither a list nor a map`);
  const decisive = node.name === 'exists';
  let error: CelError | undefined;
  for (const element of elements) {
    let result: CelValue;
    try {
      result = evaluate(node.body, { ...env, vars: { ...env.vars, [node.iter]: element } });
    } catch (err) {
      if (!(err instanceof CelError)) throw err;
      error ??= err;
      continue;
    }
    if (typeof result !== 'boolean') throw new CelError(`no such overload: ${node.name}() predicate gave a non-bool`);
    if (result === decisive) return decisive;
  }
  if (error !== undefined) throw error;
  return !decisive;
}

/** The authorizer library: each builder method returns a new request; `check(verb)` asks, `allowed()` reads the answer. */
function authorizerCall(name: string, target: CelAuthorizer | CelDecision, args: CelValue[]): CelValue {
  if (target instanceof CelDecision) {
    if (name !== 'allowed' || args.length !== 0) throw new CelError(`no such overload: ${name}() on an authorizer decision (this testbed's CEL knows allowed())`);
    return target.allowed;
  }
  const arg = args[0];
  if (args.length !== 1 || typeof arg !== 'string') throw new CelError(`no such overload: authorizer ${name}() takes one string`);
  if (name === 'check') return new CelDecision(target.decide({ ...target.check, verb: arg }));
  if (!['group', 'resource', 'subresource', 'namespace', 'name'].includes(name)) throw new CelError(`no such overload: ${name}() on the authorizer`);
  return new CelAuthorizer(target.decide, { ...target.check, [name]: arg });
}

function call(node: Extract<Node, { t: 'call' }>, ev: (n: Node) => CelValue): CelValue {
  if (node.name === 'has') {
    const arg = node.args[0];
    if (node.args.length !== 1 || arg?.t !== 'select') throw new CelError('has() takes one field selection, as has(a.b)');
    const of = ev(arg.of);
    return isMap(of) && arg.field in of;
  }
  const target = node.target === undefined ? undefined : ev(node.target);
  const args = node.args.map(ev);
  if (target instanceof CelAuthorizer || target instanceof CelDecision) return authorizerCall(node.name, target, args);
  if (authorizerMethods.includes(node.name)) throw new CelError(`no such overload: ${node.name}() is the authorizer's`);
  if (node.name === 'size') {
    const v = target ?? args[0] ?? null;
    if (typeof v === 'string' || Array.isArray(v)) return v.length;
    if (isMap(v)) return Object.keys(v).length;
    throw new CelError("no such overload: size() of this value");
  }
  const arg = args[0];
  if (typeof target !== 'string' || typeof arg !== 'string' || args.length !== 1) throw new CelError(`no such overload: ${node.name}() takes a string and one string argument`);
  if (node.name === 'startsWith') return target.startsWith(arg);
  if (node.name === 'endsWith') return target.endsWith(arg);
  return target.includes(arg);
}

function binary(node: Extract<Node, { t: 'binary' }>, ev: (n: Node) => CelValue): CelValue {
  if (node.op === '&&' || node.op === '||') {
    // CEL's logical operators are commutative as to errors: an error on one side is absorbed
    // when the other side decides the result.
    let left: CelValue | CelError;
    try {
      left = ev(node.left);
    } catch (err) {
      if (!(err instanceof CelError)) throw err;
      left = err;
    }
    const decisive = node.op === '||';
    if (left === decisive) return decisive;
    const right = ev(node.right);
    if (typeof right !== 'boolean') throw new CelError(`no such overload: '${node.op}' on a non-bool`);
    if (left instanceof CelError) {
      if (right === decisive) return decisive;
      throw left;
    }
    if (typeof left !== 'boolean') throw new CelError(`no such overload: '${node.op}' on a non-bool`);
    return right;
  }
  const left = ev(node.left);
  const right = ev(node.right);
  switch (node.op) {
    case '==': return equal(left, right);
    case '!=': return !equal(left, right);
    case '+':
      if (typeof left === 'string' && typeof right === 'string') return left + right;
      if (typeof left === 'number' && typeof right === 'number') return left + right;
      if (Array.isArray(left) && Array.isArray(right)) return [...left, ...right];
      throw new CelError("no such overload: '+' on these types");
    case '-':
      if (typeof left === 'number' && typeof right === 'number') return left - right;
      throw new CelError("no such overload: '-' on these types");
    case 'in':
      if (Array.isArray(right)) return right.some((v) => equal(v, left));
      if (isMap(right) && typeof left === 'string') return left in right;
      throw new CelError("no such overload: 'in' needs a list or a map on its right");
    default: {
      if (!((typeof left === 'number' && typeof right === 'number') || (typeof left === 'string' && typeof right === 'string'))) {
        throw new CelError(`no such overload: '${node.op}' on these types`);
      }
      if (node.op === '<') return left < right;
      if (node.op === '<=') return left <= right;
      if (node.op === '>') return left > right;
      return left >= right;
    }
  }
}
