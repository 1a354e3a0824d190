// ValidatingAdmissionPolicies as kube-apiserver's ValidatingAdmissionPolicy plugin runs them
// (after the mutating webhooks, before the validating ones): for each binding, in policy then
// binding name order, whose policy exists and whose validationActions hold Deny, the policy's
// matchConstraints (resourceRules less excludeResourceRules, namespaceSelector, objectSelector)
// and the binding's matchResources must match the request, then every matchCondition; then its
// validations are evaluated, with its variables (lazily, once each). The first validation that
// is false refuses the request with kube-apiserver's Status: `<resource> "<name>" is forbidden:
// ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied request: <message>`, the
// validation's `reason` (403 Forbidden, 401, 413; 422 Invalid when it names none), the message
// from messageExpression, else `message`, else "failed expression: <expression>". An expression
// that fails to evaluate refuses in the same form under failurePolicy Fail and is skipped under
// Ignore. Warn and Audit actions, params and auditAnnotations are not done here (a policy or
// binding using them is refused at write, `policy-configuration.ts`).
import { ApiError } from '../errors.js';
import { arr, isObject, meta, obj, str, type JsonObject } from '../json.js';
import type { Store } from '../store.js';
import { celVariables, exemptFromAdmission, ruleMatches, selectorsMatch, type AdmissionAttributes } from './attributes.js';
import { CelError, compileCel, type CelValue } from './cel-subset.js';
import { POLICY_VARIABLES } from './policy-configuration.js';

const codes: Readonly<Record<string, number>> = { Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413, Invalid: 422 };

interface Denial {
  readonly message: string;
  readonly reason: string;
}

export class PolicyAdmission {
  constructor(private readonly store: Store) {}

  /** Throws the first denial of a Deny binding whose policy matches the request. */
  validate(attrs: AdmissionAttributes): void {
    if (exemptFromAdmission(attrs)) return;
    const byName = (a: JsonObject, b: JsonObject): number => {
      const x = str(meta(a)['name']) ?? '';
      const y = str(meta(b)['name']) ?? '';
      return x < y ? -1 : x > y ? 1 : 0;
    };
    const bindings = this.store.list('validatingadmissionpolicybindings', undefined);
    for (const policy of this.store.list('validatingadmissionpolicies', undefined).sort(byName)) {
      const policyName = str(meta(policy)['name']) ?? '';
      const spec = obj(policy['spec']) ?? {};
      if (!this.#constraintsMatch(obj(spec['matchConstraints']), attrs)) continue;
      for (const binding of bindings.filter((b) => obj(b['spec'])?.['policyName'] === policyName).sort(byName)) {
        const bindingSpec = obj(binding['spec']) ?? {};
        if (!arr(bindingSpec['validationActions']).includes('Deny')) continue;
        const matchResources = obj(bindingSpec['matchResources']);
        if (matchResources !== undefined && !this.#constraintsMatch(matchResources, attrs, true)) continue;
        const denial = this.#evaluate(spec, attrs);
        if (denial !== undefined) throw refusal(attrs, policyName, str(meta(binding)['name']) ?? '', denial);
      }
    }
  }

  /** matchConstraints (rules required) or a binding's matchResources (no rules: all the policy's). */
  #constraintsMatch(constraints: JsonObject | undefined, attrs: AdmissionAttributes, rulesOptional = false): boolean {
    if (constraints === undefined) return false;
    const matches = (rule: unknown): boolean => {
      if (!isObject(rule) || !ruleMatches(rule, attrs)) return false;
      const names = arr(rule['resourceNames']);
      return names.length === 0 || names.includes(attrs.name);
    };
    const rules = arr(constraints['resourceRules']);
    if (!(rulesOptional && rules.length === 0) && !rules.some(matches)) return false;
    if (arr(constraints['excludeResourceRules']).some(matches)) return false;
    return selectorsMatch(this.store, constraints, attrs);
  }

  /** The policy's decision on a matching request: undefined when it allows it. */
  #evaluate(spec: JsonObject, attrs: AdmissionAttributes): Denial | undefined {
    const failOpen = spec['failurePolicy'] === 'Ignore';
    const vars = celVariables(this.store, attrs);
    const declared = arr(spec['variables']).map((v) => ({ name: str(obj(v)?.['name']) ?? '', expression: str(obj(v)?.['expression']) ?? '' }));
    const computed = new Map<string, { value: CelValue } | { error: CelError }>();
    const variable = (name: string): CelValue => {
      let got = computed.get(name);
      if (got === undefined) {
        const index = declared.findIndex((v) => v.name === name);
        const v = declared[index];
        if (v === undefined) throw new CelError(`no such variable: ${name}`);
        try {
          got = { value: compileCel(v.expression, POLICY_VARIABLES, declared.slice(0, index).map((d) => d.name)).evaluate(vars, variable) };
        } catch (err) {
          if (!(err instanceof CelError)) throw err;
          got = { error: err };
        }
        computed.set(name, got);
      }
      if ('error' in got) throw got.error;
      return got.value;
    };
    const names = declared.map((d) => d.name);
    const run = (expression: string): CelValue => compileCel(expression, POLICY_VARIABLES, names).evaluate(vars, variable);
    const failed = (message: string): Denial | undefined => (failOpen ? undefined : { message, reason: 'Invalid' });

    for (const c of arr(spec['matchConditions'])) {
      const condition = obj(c) ?? {};
      try {
        const result = run(str(condition['expression']) ?? '');
        if (result === false) return undefined;
        if (result !== true) return failed(`expression '${String(condition['name'])}' resulted in non-boolean`);
      } catch (err) {
        if (!(err instanceof CelError)) throw err;
        return failed(`expression '${String(condition['name'])}' resulted in error: ${err.message}`);
      }
    }
    for (const v of arr(spec['validations'])) {
      const validation = obj(v) ?? {};
      const expression = str(validation['expression']) ?? '';
      let result: CelValue;
      try {
        result = run(expression);
      } catch (err) {
        if (!(err instanceof CelError)) throw err;
        const denial = failed(`expression '${expression}' resulted in error: ${err.message}`);
        if (denial !== undefined) return denial;
        continue;
      }
      if (result === true) continue;
      if (result !== false) {
        const denial = failed(`expression '${expression}' resulted in non-boolean`);
        if (denial !== undefined) return denial;
        continue;
      }
      return { message: this.#message(validation, expression, run), reason: str(validation['reason']) ?? 'Invalid' };
    }
    return undefined;
  }

  /** messageExpression when it gives a non-empty string, else message, else the expression. */
  #message(validation: JsonObject, expression: string, run: (expression: string) => CelValue): string {
    const messageExpression = str(validation['messageExpression']);
    if (messageExpression !== undefined) {
      try {
        const text = run(messageExpression);
        if (typeof text === 'string' && text.trim() !== '') return text;
      } catch (err) {
        if (!(err instanceof CelError)) throw err;
      }
    }
    return str(validation['message']) ?? `failed expression: ${expression}`;
  }
}

/** kube-apiserver's admission.NewForbidden with the policy's reason and its code. */
function refusal(attrs: AdmissionAttributes, policy: string, binding: string, denial: Denial): ApiError {
  const why = `ValidatingAdmissionPolicy '${policy}' with binding '${binding}' denied request: ${denial.message}`;
  const resource = attrs.rt.group === '' ? attrs.rt.resource : `${attrs.rt.resource}.${attrs.rt.group}`;
  const name = attrs.name !== '' ? attrs.name : str(meta(attrs.object ?? {})['name']) ?? '';
  const message = name === '' ? `${resource} is forbidden: ${why}` : `${resource} "${name}" is forbidden: ${why}`;
  const details: JsonObject = { name, kind: attrs.rt.resource, causes: [{ message: why }] };
  if (attrs.rt.group !== '') details['group'] = attrs.rt.group;
  return new ApiError(codes[denial.reason] ?? 400, denial.reason, message, details);
}
