// Admission webhooks as kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook
// plugins call them: the configurations sorted by name, each one's webhooks in order; a webhook is
// called when its namespaceSelector, objectSelector, one of its rules (operation, group, version,
// resource with subresource, scope) and all its matchConditions match. Mutating webhooks run one
// after another and their JSONPatch is applied to the object the next one sees (those with
// reinvocationPolicy IfNeeded are called once more when a later one changed the object);
// validating ones run in parallel and the first refusal in order wins. A refusal is passed to the
// client as the webhook's Status with "admission webhook "NAME" denied the request: " before its
// message; a failed call refuses with 500 "failed calling webhook" under failurePolicy Fail and
// is ignored under Ignore. The testbed serves one version per resource, so matchPolicy
// Equivalent finds nothing an Exact rule would not.
import { randomUUID } from 'node:crypto';
import { jsonEqual } from '@podvirt/api';
import { ApiError } from '../errors.js';
import { applyJsonPatch } from '../json-patch.js';
import { arr, isObject, meta, obj, str, type JsonObject, type JsonValue } from '../json.js';
import type { Store } from '../store.js';
import { celVariables, exemptFromAdmission, reviewRequest, ruleMatches, selectorsMatch, type AdmissionAttributes } from './attributes.js';
import { CelError, compileCel } from './cel-subset.js';
import { PolicyAdmission } from './policy-admission.js';
import { postReview, WebhookCallError } from './webhook-client.js';
import { MATCH_CONDITION_VARIABLES } from './webhook-configuration.js';

export type { AdmissionAttributes, Operation } from './attributes.js';

/** Where a webhook's `clientConfig.service` is reached; undefined: it cannot be from here. */
export type ServiceResolver = (service: { namespace: string; name: string; port: number; path: string }) => string | undefined;

interface Hook {
  readonly configuration: string;
  readonly spec: JsonObject;
  readonly name: string;
}

export class WebhookAdmission {
  readonly #policies: PolicyAdmission;

  constructor(
    private readonly store: Store,
    private readonly resolveService: ServiceResolver = () => undefined,
  ) {
    this.#policies = new PolicyAdmission(store);
  }

  /** Runs the mutating webhooks; returns the object they leave (the same one when none patched). */
  async mutate(attrs: AdmissionAttributes): Promise<JsonObject | undefined> {
    const hooks = this.#hooks('mutatingwebhookconfigurations', attrs);
    if (hooks.length === 0) return attrs.object;
    let object = attrs.object;
    const reinvocable: Hook[] = [];
    let changedAfterReinvocable = false;
    for (const hook of hooks) {
      const patched = await this.#callMutating(hook, { ...attrs, object });
      if (patched !== undefined && !jsonEqual(patched, object)) {
        object = patched;
        if (reinvocable.length > 0) changedAfterReinvocable = true;
      }
      if (hook.spec['reinvocationPolicy'] === 'IfNeeded') reinvocable.push(hook);
    }
    if (changedAfterReinvocable) {
      for (const hook of reinvocable) {
        if (!this.#matches(hook, { ...attrs, object })) continue;
        object = (await this.#callMutating(hook, { ...attrs, object })) ?? object;
      }
    }
    return object;
  }

  /**
   * Runs the ValidatingAdmissionPolicies (`policy-admission.ts`), then the validating webhooks in
   * parallel; throws the first refusal (in their order).
   */
  async validate(attrs: AdmissionAttributes): Promise<void> {
    this.#policies.validate(attrs);
    const hooks = this.#hooks('validatingwebhookconfigurations', attrs);
    const results = await Promise.allSettled(hooks.map((hook) => this.#call(hook, attrs, false)));
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  }

  #hooks(storageKey: string, attrs: AdmissionAttributes): Hook[] {
    if (exemptFromAdmission(attrs)) return [];
    const configurations = this.store.list(storageKey, undefined)
      .map((c) => ({ name: str(meta(c)['name']) ?? '', config: c }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const hooks: Hook[] = [];
    for (const { name, config } of configurations) {
      for (const spec of arr(config['webhooks'])) {
        if (!isObject(spec)) continue;
        const hook = { configuration: name, spec, name: str(spec['name']) ?? '' };
        if (this.#matches(hook, attrs)) hooks.push(hook);
      }
    }
    return hooks;
  }

  #matches(hook: Hook, attrs: AdmissionAttributes): boolean {
    if (!selectorsMatch(this.store, hook.spec, attrs)) return false;
    if (!arr(hook.spec['rules']).some((r) => isObject(r) && ruleMatches(r, attrs))) return false;
    return this.#conditionsMatch(hook, attrs);
  }

  #conditionsMatch(hook: Hook, attrs: AdmissionAttributes): boolean {
    const conditions = arr(hook.spec['matchConditions']);
    if (conditions.length === 0) return true;
    const vars = celVariables(this.store, attrs);
    const errors: string[] = [];
    for (const c of conditions) {
      const condition = obj(c) ?? {};
      try {
        const result = compileCel(str(condition['expression']) ?? '', MATCH_CONDITION_VARIABLES).evaluate(vars);
        if (result === false) return false;
        if (result !== true) errors.push(`expression '${String(condition['name'])}' resulted in non-boolean`);
      } catch (err) {
        if (!(err instanceof CelError)) throw err;
        errors.push(`expression '${String(condition['name'])}' resulted in error: ${err.message}`);
      }
    }
    if (errors.length === 0) return true;
    if (hook.spec['failurePolicy'] === 'Ignore') return false;
    throw ApiError.forbidden({ group: attrs.rt.group, resource: attrs.rt.resource, name: attrs.name }, `failed to evaluate match conditions of webhook "${hook.name}": ${errors.join(', ')}`);
  }

  async #callMutating(hook: Hook, attrs: AdmissionAttributes): Promise<JsonObject | undefined> {
    return this.#call(hook, attrs, true);
  }

  /** Calls one webhook; returns the patched object (mutating) or undefined; throws its refusal. */
  async #call(hook: Hook, attrs: AdmissionAttributes, mutating: boolean): Promise<JsonObject | undefined> {
    const spec = hook.spec;
    if (attrs.dryRun && !['None', 'NoneOnDryRun'].includes(str(spec['sideEffects']) ?? '')) {
      throw ApiError.badRequest(`admission webhook "${hook.name}" does not support dry run`);
    }
    const uid = randomUUID();
    const failOpen = spec['failurePolicy'] === 'Ignore';
    let response: JsonObject;
    try {
      if (!arr(spec['admissionReviewVersions']).includes('v1')) throw new WebhookCallError('webhook does not accept v1 AdmissionReview (this testbed speaks v1 only)');
      const review = await postReview(this.#target(hook), { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: reviewRequest(uid, attrs) });
      response = verifyResponse(review, uid, mutating);
    } catch (err) {
      if (!(err instanceof WebhookCallError)) throw err;
      if (failOpen) return undefined;
      throw ApiError.internal(new Error(`failed calling webhook "${hook.name}": ${err.message}`, { cause: err }));
    }
    if (response['allowed'] !== true) throw denied(hook.name, obj(response['status']));
    const patch = str(response['patch']);
    if (!mutating || patch === undefined || patch === '') return undefined;
    let operations: JsonValue;
    try {
      operations = JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as JsonValue;
    } catch (err) {
      if (failOpen) return undefined;
      throw ApiError.internal(new Error(`failed calling webhook "${hook.name}": received undecodable patch in webhook response: ${(err as Error).message}`));
    }
    if (!Array.isArray(operations) || operations.length === 0) return undefined;
    if (attrs.object === undefined) throw ApiError.internal(new Error(`admission webhook "${hook.name}" attempted to modify the object, which is not supported for this operation`));
    const patched = applyJsonPatch(attrs.object, operations);
    if (!isObject(patched)) throw ApiError.internal(new Error(`admission webhook "${hook.name}" patched the object into something that is not an object`));
    return patched;
  }

  #target(hook: Hook): { url: string; ca: string | undefined; timeoutSeconds: number } {
    const client = obj(hook.spec['clientConfig']) ?? {};
    const caBundle = str(client['caBundle']);
    const ca = caBundle === undefined || caBundle === '' ? undefined : Buffer.from(caBundle, 'base64').toString('utf8');
    const timeoutSeconds = typeof hook.spec['timeoutSeconds'] === 'number' ? hook.spec['timeoutSeconds'] : 10;
    const url = str(client['url']);
    if (url !== undefined) return { url, ca, timeoutSeconds };
    const service = obj(client['service']) ?? {};
    const ref = {
      namespace: str(service['namespace']) ?? '',
      name: str(service['name']) ?? '',
      port: typeof service['port'] === 'number' ? service['port'] : 443,
      path: str(service['path']) ?? '/',
    };
    const resolved = this.resolveService(ref);
    if (resolved === undefined) {
      throw new WebhookCallError(`service "${ref.namespace}/${ref.name}" cannot be reached: the testbed's API server routes to no Service (give the webhook a clientConfig.url)`);
    }
    return { url: resolved, ca, timeoutSeconds };
  }
}

function verifyResponse(review: JsonObject, uid: string, mutating: boolean): JsonObject {
  const response = obj(review['response']);
  const invalid = (why: string): WebhookCallError => new WebhookCallError(`received invalid webhook response: ${why}`);
  if (response === undefined) throw invalid('webhook response was absent');
  if (review['apiVersion'] !== 'admission.k8s.io/v1' || review['kind'] !== 'AdmissionReview') {
    throw invalid(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${String(review['apiVersion'])}, Kind=${String(review['kind'])}`);
  }
  if (response['uid'] !== uid) throw invalid(`expected response.uid="${uid}", got "${String(response['uid'])}"`);
  const patch = str(response['patch']) ?? '';
  const patchType = response['patchType'];
  if (mutating) {
    if (patch !== '' && patchType === undefined) throw invalid('webhook returned response.patch but not response.patchType');
    if (patch === '' && patchType !== undefined) throw invalid('webhook returned response.patchType but not response.patch');
    if (patchType !== undefined && patchType !== 'JSONPatch') throw new WebhookCallError(`unsupported patch type "${String(patchType)}"`);
  } else {
    if (patch !== '') throw invalid('validating webhook may not return response.patch');
    if (patchType !== undefined) throw invalid('validating webhook may not return response.patchType');
  }
  return response;
}

/** Kubernetes' webhook ToStatusErr: the webhook's Status, at least 400, its message prefixed. */
function denied(webhook: string, result: JsonObject | undefined): ApiError {
  const status = result ?? {};
  const code = typeof status['code'] === 'number' && status['code'] >= 400 ? status['code'] : 400;
  const prefix = `admission webhook "${webhook}" denied the request`;
  const message = str(status['message']) ?? '';
  const reason = str(status['reason']) ?? '';
  const text = message !== '' ? `${prefix}: ${message}` : reason !== '' ? `${prefix}: ${reason}` : `${prefix} without explanation`;
  const details = obj(status['details']);
  return new ApiError(code, reason, text, details);
}
