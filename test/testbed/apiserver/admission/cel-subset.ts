// The part of CEL that admission webhooks' `matchConditions` need here: literals, lists, field
// selection and indexing, `!`, `-`, `&&`, `||`, comparisons, `in`, `has()`, `size()` and the
// string methods `startsWith`, `endsWith`, `contains`. An expression outside this subset is refused
// when the configuration is written (as kube-apiserver refuses one that does not compile), so no
// condition is ever silently taken as true.

export type CelValue = string | number | boolean | null | CelValue[] | { [key: string]: CelValue };

type Node =
  | { t: 'lit'; v: CelValue }
  | { t: 'ident'; name: string }
  | { t: 'list'; items: Node[] }
  | { t: 'select'; of: Node; field: string }
  | { t: 'index'; of: Node; key: Node }
  | { t: 'call'; name: string; target: Node | undefined; args: Node[] }
  | { t: 'unary'; op: '!' | '-'; arg: Node }
  | { t: 'binary'; op: string; left: Node; right: Node };

export class CelError extends Error {
  override readonly name = 'CelError';
  readonly code = 'TESTBED_CEL_ERROR';
}

const functions = new Set(['has', 'size']);
const methods = new Set(['startsWith', 'endsWith', 'contains', 'size']);

/** A compiled expression; `variables` are the names it may use. */
export interface CelProgram {
  evaluate(vars: Readonly<Record<string, CelValue>>): CelValue;
}

export function compileCel(source: string, variables: readonly string[]): CelProgram {
  const tokens = tokenize(source);
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
    if (tok.startsWith("'") || tok.startsWith('"')) return { t: 'lit', v: JSON.parse(`"${tok.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"')}"`) as string };
    if (/^[0-9]/.test(tok)) return { t: 'lit', v: Number(tok) };
    if (tok === 'true' || tok === 'false') return { t: 'lit', v: tok === 'true' };
    if (tok === 'null') return { t: 'lit', v: null };
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tok)) throw new CelError(`Syntax error: unexpected '${tok}'`);
    if (peek() === '(') {
      if (!functions.has(tok)) throw new CelError(`undeclared reference to '${tok}' (this testbed's CEL knows ${[...functions].join(', ')})`);
      return { t: 'call', name: tok, target: undefined, args: args() };
    }
    if (!variables.includes(tok)) throw new CelError(`undeclared reference to '${tok}'`);
    return { t: 'ident', name: tok };
  };
  const member = (): Node => {
    let node = primary();
    for (;;) {
      if (peek() === '.') {
        take();
        const field = take();
        if (peek() === '(') {
          if (!methods.has(field)) throw new CelError(`undeclared reference to '${field}' (this testbed's CEL knows ${[...methods].join(', ')})`);
          node = { t: 'call', name: field, target: node, args: args() };
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
  const relation = binaryLevel(['==', '!=', '<', '<=', '>', '>=', 'in'], unary);
  const and = binaryLevel(['&&'], relation);
  const or = binaryLevel(['||'], and);
  function expr(): Node {
    return or();
  }
  const root = expr();
  if (pos !== tokens.length) throw new CelError(`Syntax error: unexpected '${tokens[pos] ?? ''}'`);
  return { evaluate: (vars) => evaluate(root, vars) };
}

function tokenize(source: string): string[] {
  const re = /\s*(?:('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|([0-9]+(?:\.[0-9]+)?)|(==|!=|<=|>=|&&|\|\||[()[\].,!<>-])|([A-Za-z_][A-Za-z0-9_]*))/y;
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
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function evaluate(node: Node, vars: Readonly<Record<string, CelValue>>): CelValue {
  const ev = (n: Node): CelValue => evaluate(n, vars);
  switch (node.t) {
    case 'lit': return node.v;
    case 'ident': return vars[node.name] ?? null;
    case 'list': return node.items.map(ev);
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

function call(node: Extract<Node, { t: 'call' }>, ev: (n: Node) => CelValue): CelValue {
  if (node.name === 'has') {
    const arg = node.args[0];
    if (node.args.length !== 1 || arg?.t !== 'select') throw new CelError('has() takes one field selection, as has(a.b)');
    const of = ev(arg.of);
    return isMap(of) && arg.field in of;
  }
  const target = node.target === undefined ? undefined : ev(node.target);
  const args = node.args.map(ev);
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
    case '==': return JSON.stringify(left) === JSON.stringify(right);
    case '!=': return JSON.stringify(left) !== JSON.stringify(right);
    case 'in':
      if (Array.isArray(right)) return right.some((v) => JSON.stringify(v) === JSON.stringify(left));
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
