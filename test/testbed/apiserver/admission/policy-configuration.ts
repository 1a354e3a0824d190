// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1):
// kube-apiserver's defaults and the checks it makes when one is written, and the refusal, naming
// the field, of what this server would not evaluate as kube-apiserver does: an expression outside
// its CEL subset (`cel-subset.ts`), params (paramKind, paramRef), auditAnnotations, and the Warn
// and Audit validation actions. So a stored policy is one `policy-admission.ts` runs as written.
import type { StatusCause } from '../errors.js';
import { arr, isObject, obj, str, type JsonObject } from '../json.js';
import type { Strategy } from '../resource-type.js';
import { storedObjectStrategy } from '../strategies/stored-object.js';
import { CelError, compileCel } from './cel-subset.js';

/** The variables a policy's expressions may use (besides `variables.NAME`). */
export const POLICY_VARIABLES = ['request', 'object', 'oldObject', 'authorizer'] as const;

const operations = new Set(['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

function policyDefaults(policy: JsonObject): void {
  const spec = obj(policy['spec']);
  if (spec === undefined) return;
  spec['failurePolicy'] ??= 'Fail';
  const constraints = obj(spec['matchConstraints']);
  if (constraints === undefined) return;
  constraints['matchPolicy'] ??= 'Equivalent';
  constraints['namespaceSelector'] ??= {};
  constraints['objectSelector'] ??= {};
  for (const rule of arr(constraints['resourceRules'])) if (isObject(rule)) rule['scope'] ??= '*';
}

function checkPolicy(policy: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const bad = (field: string, reason: string, message: string): void => {
    causes.push({ reason, message, field });
  };
  const spec = obj(policy['spec']);
  if (spec === undefined) return [{ field: 'spec', reason: 'FieldValueRequired', message: 'Required value' }];
  const unsupported = (field: string, what: string): void => bad(field, 'FieldValueForbidden', `Forbidden: ${what} are not evaluated by the testbed's API server`);
  if (spec['paramKind'] !== undefined) unsupported('spec.paramKind', 'params');
  if (arr(spec['auditAnnotations']).length > 0) unsupported('spec.auditAnnotations', 'audit annotations');
  const failurePolicy = str(spec['failurePolicy']);
  if (failurePolicy !== 'Fail' && failurePolicy !== 'Ignore') bad('spec.failurePolicy', 'FieldValueNotSupported', `Unsupported value: "${String(failurePolicy)}": supported values: "Fail", "Ignore"`);
  const constraints = obj(spec['matchConstraints']);
  if (constraints === undefined) bad('spec.matchConstraints', 'FieldValueRequired', 'Required value');
  else {
    const rules = arr(constraints['resourceRules']);
    if (rules.length === 0) bad('spec.matchConstraints.resourceRules', 'FieldValueRequired', 'Required value');
    rules.forEach((rule, j) => {
      const r = obj(rule) ?? {};
      for (const op of arr(r['operations'])) {
        if (typeof op !== 'string' || !operations.has(op)) bad(`spec.matchConstraints.resourceRules[${j}].operations`, 'FieldValueNotSupported', `Unsupported value: ${JSON.stringify(op)}: supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`);
      }
      for (const key of ['apiGroups', 'apiVersions', 'resources', 'operations']) {
        if (arr(r[key]).length === 0) bad(`spec.matchConstraints.resourceRules[${j}].${key}`, 'FieldValueRequired', 'Required value');
      }
    });
  }
  const validations = arr(spec['validations']);
  if (validations.length === 0) bad('spec.validations', 'FieldValueRequired', 'Required value: validations or auditAnnotations must contain at least one item');
  const compiles = (field: string, expression: string, variables: readonly string[]): void => {
    try {
      compileCel(expression, POLICY_VARIABLES, variables);
    } catch (err) {
      if (!(err instanceof CelError)) throw err;
      bad(field, 'FieldValueInvalid', `Invalid value: "${expression}": compilation failed: ${err.message}`);
    }
  };
  const names: string[] = [];
  arr(spec['variables']).forEach((v, i) => {
    const name = str(obj(v)?.['name']) ?? '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) bad(`spec.variables[${i}].name`, 'FieldValueInvalid', `Invalid value: "${name}": name is not a valid CEL identifier`);
    compiles(`spec.variables[${i}].expression`, str(obj(v)?.['expression']) ?? '', [...names]);
    names.push(name);
  });
  arr(spec['matchConditions']).forEach((c, i) => {
    if ((str(obj(c)?.['name']) ?? '') === '') bad(`spec.matchConditions[${i}].name`, 'FieldValueRequired', 'Required value');
    compiles(`spec.matchConditions[${i}].expression`, str(obj(c)?.['expression']) ?? '', names);
  });
  validations.forEach((v, i) => {
    const validation = obj(v) ?? {};
    const expression = str(validation['expression']) ?? '';
    if (expression === '') bad(`spec.validations[${i}].expression`, 'FieldValueRequired', 'Required value: expression is not specified');
    else compiles(`spec.validations[${i}].expression`, expression, names);
    const messageExpression = str(validation['messageExpression']);
    if (messageExpression !== undefined) compiles(`spec.validations[${i}].messageExpression`, messageExpression, names);
  });
  return causes;
}

function checkBinding(binding: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = obj(binding['spec']) ?? {};
  if ((str(spec['policyName']) ?? '') === '') causes.push({ field: 'spec.policyName', reason: 'FieldValueRequired', message: 'Required value' });
  if (spec['paramRef'] !== undefined) causes.push({ field: 'spec.paramRef', reason: 'FieldValueForbidden', message: 'Forbidden: params are not evaluated by the testbed\'s API server' });
  const actions = arr(spec['validationActions']);
  if (actions.length === 0) causes.push({ field: 'spec.validationActions', reason: 'FieldValueRequired', message: 'Required value: at least one validation action is required' });
  actions.forEach((a, i) => {
    if (a === 'Deny') return;
    const known = a === 'Warn' || a === 'Audit';
    causes.push({
      field: `spec.validationActions[${i}]`,
      reason: known ? 'FieldValueForbidden' : 'FieldValueNotSupported',
      message: known ? `Forbidden: the testbed's API server acts on Deny only` : `Unsupported value: ${JSON.stringify(a)}: supported values: "Audit", "Deny", "Warn"`,
    });
  });
  return causes;
}

export const validatingAdmissionPolicyStrategy: Strategy = { ...storedObjectStrategy('subdomain', checkPolicy), defaults: policyDefaults };
export const validatingAdmissionPolicyBindingStrategy: Strategy = storedObjectStrategy('subdomain', checkBinding);
