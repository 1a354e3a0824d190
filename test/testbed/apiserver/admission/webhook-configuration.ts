// ValidatingWebhookConfiguration and MutatingWebhookConfiguration (admissionregistration.k8s.io/v1):
// the defaults kube-apiserver fills in and the checks it makes when one is written, so that a
// configuration the real server refuses is refused here too, and one stored here is one this
// server can call (its matchConditions compile in the CEL subset it evaluates).
import type { StatusCause } from '../errors.js';
import { arr, isObject, obj, str, type JsonObject } from '../json.js';
import type { Strategy } from '../resource-type.js';
import { storedObjectStrategy } from '../strategies/stored-object.js';
import { CelError, compileCel } from './cel-subset.js';

/** The variables a webhook's matchConditions may use. */
export const MATCH_CONDITION_VARIABLES = ['request', 'object', 'oldObject', 'authorizer'] as const;

const operations = new Set(['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT']);
const sideEffectClasses = new Set(['None', 'NoneOnDryRun']);
const qualifiedName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function defaults(mutating: boolean) {
  return (config: JsonObject): void => {
    for (const hook of arr(config['webhooks'])) {
      if (!isObject(hook)) continue;
      hook['failurePolicy'] ??= 'Fail';
      hook['matchPolicy'] ??= 'Equivalent';
      hook['namespaceSelector'] ??= {};
      hook['objectSelector'] ??= {};
      hook['timeoutSeconds'] ??= 10;
      if (mutating) hook['reinvocationPolicy'] ??= 'Never';
      const service = obj(obj(hook['clientConfig'])?.['service']);
      if (service !== undefined) service['port'] ??= 443;
      for (const rule of arr(hook['rules'])) if (isObject(rule)) rule['scope'] ??= '*';
    }
  };
}

function check(config: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const bad = (field: string, reason: string, message: string): void => {
    causes.push({ reason, message, field });
  };
  const names = new Set<string>();
  arr(config['webhooks']).forEach((hook, i) => {
    const at = `webhooks[${i}]`;
    if (!isObject(hook)) {
      bad(at, 'FieldValueInvalid', 'Invalid value: must be an object');
      return;
    }
    const name = str(hook['name']) ?? '';
    if (name === '') bad(`${at}.name`, 'FieldValueRequired', 'Required value');
    else if (!qualifiedName.test(name) || name.split('.').length < 3) {
      bad(`${at}.name`, 'FieldValueInvalid', `Invalid value: "${name}": should be a domain with at least three segments separated by dots`);
    } else if (names.has(name)) bad(`${at}.name`, 'FieldValueDuplicate', `Duplicate value: "${name}"`);
    names.add(name);
    const versions = arr(hook['admissionReviewVersions']);
    if (versions.length === 0) bad(`${at}.admissionReviewVersions`, 'FieldValueRequired', 'Required value: must specify one of v1, v1beta1');
    else if (!versions.includes('v1') && !versions.includes('v1beta1')) {
      bad(`${at}.admissionReviewVersions`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(versions)}: must include at least one of v1, v1beta1`);
    }
    const sideEffects = str(hook['sideEffects']);
    if (sideEffects === undefined) bad(`${at}.sideEffects`, 'FieldValueRequired', 'Required value: must specify one of None, NoneOnDryRun');
    else if (!sideEffectClasses.has(sideEffects)) bad(`${at}.sideEffects`, 'FieldValueNotSupported', `Unsupported value: "${sideEffects}": supported values: "None", "NoneOnDryRun"`);
    const failurePolicy = str(hook['failurePolicy']);
    if (failurePolicy !== 'Fail' && failurePolicy !== 'Ignore') bad(`${at}.failurePolicy`, 'FieldValueNotSupported', `Unsupported value: "${String(failurePolicy)}": supported values: "Fail", "Ignore"`);
    const timeout = hook['timeoutSeconds'];
    if (typeof timeout !== 'number' || timeout < 1 || timeout > 30) bad(`${at}.timeoutSeconds`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(timeout)}: the timeout value must be between 1 and 30 seconds`);
    const client = obj(hook['clientConfig']) ?? {};
    const url = str(client['url']);
    const service = obj(client['service']);
    if ((url === undefined) === (service === undefined)) bad(`${at}.clientConfig`, 'FieldValueRequired', 'Required value: exactly one of url or service is required');
    if (url !== undefined) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        bad(`${at}.clientConfig.url`, 'FieldValueInvalid', `Invalid value: "${url}": host must be specified`);
      }
      if (parsed !== undefined && parsed.protocol !== 'https:') bad(`${at}.clientConfig.url`, 'FieldValueInvalid', `Invalid value: "${url}": 'https' is the only allowed URL scheme`);
    }
    if (service !== undefined) {
      for (const key of ['namespace', 'name']) if ((str(service[key]) ?? '') === '') bad(`${at}.clientConfig.service.${key}`, 'FieldValueRequired', 'Required value: service ' + key + ' is required');
    }
    arr(hook['rules']).forEach((rule, j) => {
      const r = obj(rule) ?? {};
      for (const op of arr(r['operations'])) {
        if (typeof op !== 'string' || !operations.has(op)) bad(`${at}.rules[${j}].operations`, 'FieldValueNotSupported', `Unsupported value: ${JSON.stringify(op)}: supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`);
      }
      for (const key of ['apiGroups', 'apiVersions', 'resources', 'operations']) {
        if (arr(r[key]).length === 0) bad(`${at}.rules[${j}].${key}`, 'FieldValueRequired', 'Required value');
      }
      const scope = str(r['scope']);
      if (scope !== '*' && scope !== 'Cluster' && scope !== 'Namespaced') bad(`${at}.rules[${j}].scope`, 'FieldValueNotSupported', `Unsupported value: "${String(scope)}": supported values: "*", "Cluster", "Namespaced"`);
    });
    arr(hook['matchConditions']).forEach((condition, j) => {
      const expression = str(obj(condition)?.['expression']) ?? '';
      try {
        compileCel(expression, MATCH_CONDITION_VARIABLES);
      } catch (err) {
        if (!(err instanceof CelError)) throw err;
        bad(`${at}.matchConditions[${j}].expression`, 'FieldValueInvalid', `Invalid value: "${expression}": compilation failed: ${err.message}`);
      }
    });
  });
  return causes;
}

function webhookConfigurationStrategy(mutating: boolean): Strategy {
  return { ...storedObjectStrategy('subdomain', check), defaults: defaults(mutating) };
}

export const validatingWebhookConfigurationStrategy = webhookConfigurationStrategy(false);
export const mutatingWebhookConfigurationStrategy = webhookConfigurationStrategy(true);
