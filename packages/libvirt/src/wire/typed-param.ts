// remote_typed_param: a field name and a union switched on virTypedParameterType.
import { XdrError } from '../errors.js';
import { TypedParamType } from '../gen/constants.js';
import type { XdrReader } from '../xdr/xdr-reader.js';
import type { XdrWriter } from '../xdr/xdr-writer.js';
import { STRING_MAX } from './header.js';

const FIELD_MAX = STRING_MAX; // the field is a remote_nonnull_string on the wire

export type TypedParam =
  | { readonly field: string; readonly type: 'INT' | 'UINT' | 'DOUBLE'; readonly value: number }
  | { readonly field: string; readonly type: 'LLONG' | 'ULLONG'; readonly value: bigint }
  | { readonly field: string; readonly type: 'BOOLEAN'; readonly value: boolean }
  | { readonly field: string; readonly type: 'STRING'; readonly value: string };

export type TypedParamValue = TypedParam['value'];

export function writeTypedParam(w: XdrWriter, p: TypedParam): void {
  w.string(p.field, FIELD_MAX).int(TypedParamType[p.type]);
  switch (p.type) {
    case 'INT': w.int(p.value); break;
    case 'UINT': w.uint(p.value); break;
    case 'LLONG': w.hyper(p.value); break;
    case 'ULLONG': w.uhyper(p.value); break;
    case 'DOUBLE': w.double(p.value); break;
    case 'BOOLEAN': w.int(p.value ? 1 : 0); break;
    case 'STRING': w.string(p.value, STRING_MAX); break;
  }
}

export function readTypedParam(r: XdrReader): TypedParam {
  const field = r.string(FIELD_MAX);
  const type = r.int();
  switch (type) {
    case TypedParamType.INT: return { field, type: 'INT', value: r.int() };
    case TypedParamType.UINT: return { field, type: 'UINT', value: r.uint() };
    case TypedParamType.LLONG: return { field, type: 'LLONG', value: r.hyper() };
    case TypedParamType.ULLONG: return { field, type: 'ULLONG', value: r.uhyper() };
    case TypedParamType.DOUBLE: return { field, type: 'DOUBLE', value: r.double() };
    // libvirt sends booleans as a plain int; any non-zero value is true.
    case TypedParamType.BOOLEAN: return { field, type: 'BOOLEAN', value: r.int() !== 0 };
    case TypedParamType.STRING: return { field, type: 'STRING', value: r.string(STRING_MAX) };
    default: throw new XdrError(`typed param ${field}: unknown type ${type}`);
  }
}

/** Folds a parameter list into a record; a repeated field keeps its last value. */
export function typedParamsToRecord(params: readonly TypedParam[]): Record<string, TypedParamValue> {
  const out: Record<string, TypedParamValue> = {};
  for (const p of params) out[p.field] = p.value;
  return out;
}
