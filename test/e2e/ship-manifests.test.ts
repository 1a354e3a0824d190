// The install manifests: they apply to an API server (`kubectl apply --dry-run=server -R`, as
// an operator would try them first), and they say what podvirt needs — the VMI CRD as KubeVirt
// prints it, a privileged handler DaemonSet with its host paths, probes and node name, a
// leader-electing controller, and examples that run (or fail) as their comments promise.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkVmi, validateVm } from '@podvirt/api';
import { ADMISSION_PATHS, DEFAULT_HANDLER_PORT, POD_EVICTION_PATH } from '@podvirt/podvirt-api';
import { stringify } from 'yaml';
import { guestImage } from '../testbed/index.js';
import { allManifests, at, container, docs, find, ROOT, type ManifestDoc } from './ship-manifests-helpers.js';
import { kubectl, startTestApiServer, type TestApiServer } from './testbed-helpers.js';

describe('install manifests', () => {
  let tb: TestApiServer;
  let manifests: ManifestDoc[];
  before(async () => {
    tb = await startTestApiServer();
    manifests = await allManifests();
  });
  after(() => tb.close());

  test('kubectl apply --dry-run=server -f manifests/ -R accepts every object and stores none', async () => {
    // A server-side dry run of objects in a namespace that does not exist yet fails on a real
    // cluster too, so the namespace is applied first, as an operator would.
    const ns = await kubectl(tb.kubeconfigPath, ['apply', '-f', join(ROOT, 'manifests/00-namespace.yaml')]);
    assert.equal(ns.code, 0, ns.stderr);
    const out = await kubectl(tb.kubeconfigPath, ['apply', '--dry-run=server', '-f', join(ROOT, 'manifests'), '-R']);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trim().split('\n');
    assert.equal(lines.length, manifests.length, out.stdout);
    for (const { doc } of manifests) {
      const kind = String(doc['kind']).toLowerCase();
      const name = String(at(doc, 'metadata', 'name'));
      assert.ok(lines.some((l) => l.includes(`/${name} `) && l.includes(kind.split('.')[0] ?? '') && l.endsWith('(server dry run)')), `${kind}/${name} in\n${out.stdout}`);
    }
    for (const kind of ['daemonsets', 'deployments', 'serviceaccounts']) {
      const got = await kubectl(tb.kubeconfigPath, ['get', kind, '-n', 'podvirt', '-o', 'name']);
      assert.equal(got.code, 0, got.stderr);
      assert.equal(got.stdout, '', `a dry run stores no ${kind}`);
    }
  });

  test('the dry run is a real check: a DaemonSet whose selector misses its pod labels is refused', async () => {
    const ds = structuredClone(find(manifests, 'DaemonSet', 'podvirt-handler'));
    (at(ds, 'spec', 'selector', 'matchLabels') as Record<string, string>)['app.kubernetes.io/name'] = 'other';
    const file = join(tb.dir, 'broken.yaml');
    await writeFile(file, stringify(ds));
    const out = await kubectl(tb.kubeconfigPath, ['apply', '--dry-run=server', '-f', file]);
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /selector.*does not match template/);
  });

  test('the VMI CRD: status subresource and the printer columns KubeVirt shows', () => {
    const crd = find(manifests, 'CustomResourceDefinition', 'virtualmachineinstances.kubevirt.io');
    const [v1] = docs(at(crd, 'spec', 'versions'));
    assert.deepEqual(at(v1, 'subresources'), { status: {} });
    const columns = docs(at(v1, 'additionalPrinterColumns')).map((c) => `${String(c['name'])}:${String(c['priority'] ?? 0)}`);
    assert.deepEqual(columns.slice(0, 6), ['Age:0', 'Phase:0', 'IP:0', 'NodeName:0', 'Ready:0', 'Live-Migratable:1']);
    assert.equal(at(v1, 'schema', 'openAPIV3Schema', 'properties', 'spec', 'x-kubernetes-preserve-unknown-fields'), true);
  });

  test('the VMI migration CRD: KubeVirt\'s names, status subresource, columns Phase and VMI', () => {
    const crd = find(manifests, 'CustomResourceDefinition', 'virtualmachineinstancemigrations.kubevirt.io');
    assert.deepEqual(at(crd, 'spec', 'names', 'shortNames'), ['vmim', 'vmims']);
    const [v1] = docs(at(crd, 'spec', 'versions'));
    assert.deepEqual(at(v1, 'subresources'), { status: {} });
    assert.deepEqual(docs(at(v1, 'additionalPrinterColumns')).map((c) => `${String(c['name'])}:${String(c['jsonPath'])}`), ['Phase:.status.phase', 'VMI:.spec.vmiName']);
  });

  test('the VirtualMachine CRD: KubeVirt\'s names, status subresource, columns Age, Status and Ready', () => {
    const crd = find(manifests, 'CustomResourceDefinition', 'virtualmachines.kubevirt.io');
    assert.deepEqual(at(crd, 'spec', 'names', 'shortNames'), ['vm', 'vms']);
    const [v1] = docs(at(crd, 'spec', 'versions'));
    assert.deepEqual(at(v1, 'subresources'), { status: {} });
    assert.deepEqual(docs(at(v1, 'additionalPrinterColumns')).map((c) => `${String(c['name'])}:${String(c['jsonPath'])}`), [
      'Age:.metadata.creationTimestamp',
      'Status:.status.printableStatus',
      "Ready:.status.conditions[?(@.type=='Ready')].status",
    ]);
  });

  test('the handler DaemonSet: privileged, hostPID, pods dir at /pods, host dirs, probes, node name, grace, resources', () => {
    const ds = find(manifests, 'DaemonSet', 'podvirt-handler');
    const pod = at(ds, 'spec', 'template', 'spec');
    const c = container(ds);
    assert.equal(at(pod, 'hostPID'), true);
    assert.equal(at(pod, 'serviceAccountName'), 'podvirt-handler');
    assert.equal(typeof at(pod, 'terminationGracePeriodSeconds'), 'number');
    assert.equal(at(c, 'securityContext', 'privileged'), true);
    const hostPaths = new Map(docs(at(pod, 'volumes')).map((v) => [String(v['name']), at(v, 'hostPath', 'path')]));
    const mounts = new Map(docs(at(c, 'volumeMounts')).map((m) => [String(m['mountPath']), hostPaths.get(String(m['name']))]));
    assert.equal(mounts.get('/pods'), '/var/lib/kubelet/pods');
    assert.equal(mounts.get('/var/run/podvirt'), '/var/run/podvirt');
    assert.equal(mounts.get('/var/run/podvirt-private'), '/var/run/podvirt-private');
    const args = (at(c, 'args') as string[]).join(' ');
    assert.match(args, /--pods-dir=\/pods\b/);
    assert.match(args, /--node-api-socket=\/var\/run\/podvirt\//);
    assert.match(args, /--ghost-record-dir=\/var\/run\/podvirt-private\//);
    // Live migration: the address from the pod IP, the certificates from an optional Secret.
    assert.match(args, /--migration-address=\$\(POD_IP\)/);
    const tlsDir = /--migration-tls-dir=(\S+)/.exec(args)?.[1];
    const tlsMount = docs(at(c, 'volumeMounts')).find((m) => m['mountPath'] === tlsDir);
    const tlsVolume = docs(at(pod, 'volumes')).find((v) => v['name'] === tlsMount?.['name']);
    assert.equal(at(tlsVolume, 'secret', 'secretName'), 'podvirt-migration-tls');
    assert.equal(at(tlsVolume, 'secret', 'optional'), true);
    // The node API over mutual TLS for podvirt-api: the Secret podvirt-api writes (the pod waits
    // for it), on the pod IP, podvirt-api's identity alone allowed.
    const apiDir = /--tls-cert=(\S+)\/tls\.crt/.exec(args)?.[1];
    const apiMount = docs(at(c, 'volumeMounts')).find((m) => m['mountPath'] === apiDir);
    const apiVolume = docs(at(pod, 'volumes')).find((v) => v['name'] === apiMount?.['name']);
    assert.equal(at(apiVolume, 'secret', 'secretName'), 'podvirt-handler-certs');
    assert.notEqual(at(apiVolume, 'secret', 'optional'), true);
    assert.match(args, new RegExp(`--tls-key=${apiDir ?? ''}/tls\\.key --tls-client-ca=${apiDir ?? ''}/ca\\.crt`));
    assert.match(args, /--node-api-tls-address=\$\(POD_IP\)/);
    assert.deepEqual(args.match(/--tls-allowed-client=\S+/g), ['--tls-allowed-client=CN=podvirt-api']);
    assert.equal(at(c, 'livenessProbe', 'httpGet', 'path'), '/healthz');
    assert.equal(at(c, 'readinessProbe', 'httpGet', 'path'), '/readyz');
    const port = docs(at(c, 'ports')).find((p) => p['name'] === at(c, 'livenessProbe', 'httpGet', 'port'));
    assert.match(args, new RegExp(`--health-port=${String(port?.['containerPort'])}\\b`), 'the probes reach the health port');
    const env = docs(at(c, 'env'));
    assert.equal(at(env.find((e) => e['name'] === 'NODE_NAME'), 'valueFrom', 'fieldRef', 'fieldPath'), 'spec.nodeName');
    assert.ok(at(c, 'resources', 'requests', 'memory') !== undefined && at(c, 'resources', 'limits', 'memory') !== undefined);
  });

  test('the controller Deployment elects a leader in its own namespace, where its Role grants Leases', () => {
    const deploy = find(manifests, 'Deployment', 'podvirt-controller');
    const args = at(container(deploy), 'args') as string[];
    assert.ok(args.includes('--leader-elect'));
    assert.ok(args.includes('--lease-namespace=podvirt'));
    const role = find(manifests, 'Role', 'podvirt-controller-leader-election');
    assert.equal(at(role, 'metadata', 'namespace'), 'podvirt');
    assert.deepEqual(at(role, 'rules', 0, 'resources'), ['leases']);
    assert.ok(Number(at(deploy, 'spec', 'replicas')) > 1, 'a standby replica');
  });

  test('podvirt-api\'s webhooks: paths it serves, behind its Service, main resources only, fail closed with a short timeout', () => {
    const hooks = ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].flatMap((kind) =>
      docs(at(find(manifests, kind, kind.startsWith('Validating') ? 'podvirt-api-validator' : 'podvirt-api-mutator'), 'webhooks')));
    assert.deepEqual(hooks.map((h) => at(h, 'clientConfig', 'service', 'path')).sort(), [...Object.keys(ADMISSION_PATHS), POD_EVICTION_PATH].sort());
    const service = find(manifests, 'Service', 'podvirt-api');
    for (const h of hooks) {
      assert.equal(at(h, 'clientConfig', 'service', 'name'), at(service, 'metadata', 'name'));
      assert.equal(at(h, 'clientConfig', 'service', 'namespace'), at(service, 'metadata', 'namespace'));
      assert.equal(at(h, 'failurePolicy'), 'Fail');
      assert.ok(Number(at(h, 'timeoutSeconds')) <= 10);
      // Status writes stay off; the one subresource is an eviction, and only of launcher pods.
      for (const rule of docs(at(h, 'rules'))) assert.ok((rule['resources'] as string[]).every((r) => !r.includes('/') || r === 'pods/eviction'), 'no subresource but pods/eviction');
      if (at(h, 'clientConfig', 'service', 'path') === POD_EVICTION_PATH) {
        assert.match(String(at(h, 'matchConditions', 0, 'expression')), /startsWith\('virt-launcher-'\)/);
        assert.equal(at(h, 'sideEffects'), 'NoneOnDryRun');
      }
    }
    const args = (at(container(find(manifests, 'Deployment', 'podvirt-api')), 'args') as string[]).join(' ');
    assert.match(args, /--namespace=\$\(POD_NAMESPACE\)/);
    assert.equal(at(service, 'spec', 'ports', 0, 'targetPort'), 'webhooks');
    // It makes the handlers' Secret and dials them on the port the DaemonSet serves.
    assert.match(args, /--handler-tls-secret=podvirt-handler-certs\b/);
    assert.match(args, /--node-api-ca-secret=podvirt-node-api-ca\b/);
    const handlerArgs = (at(container(find(manifests, 'DaemonSet', 'podvirt-handler')), 'args') as string[]).join(' ');
    assert.equal(/--node-api-tls-port=(\d+)/.exec(handlerArgs)?.[1], String(DEFAULT_HANDLER_PORT));
    const secretRules = docs(at(find(manifests, 'Role', 'podvirt-api-certificates'), 'rules')).filter((r) => (r['resources'] as string[]).includes('secrets') && r['resourceNames'] !== undefined);
    assert.deepEqual(secretRules.flatMap((r) => r['resourceNames'] as string[]).sort(), ['podvirt-api-certs', 'podvirt-handler-certs', 'podvirt-node-api-ca']);
  });

  test('the handler may write only its own Node: RBAC grants patch alone, admission policies check the node claim', () => {
    const role = find(manifests, 'ClusterRole', 'podvirt-handler');
    const nodeRules = docs(at(role, 'rules')).filter((r) => (r['resources'] as string[]).includes('nodes'));
    assert.deepEqual(nodeRules.map((r) => r['verbs']), [['patch']]);
    for (const name of ['podvirt-handler-node-restriction', 'podvirt-handler-vmi-restriction']) {
      const policy = find(manifests, 'ValidatingAdmissionPolicy', name);
      assert.equal(at(policy, 'spec', 'failurePolicy'), 'Fail');
      assert.match(String(at(policy, 'spec', 'matchConditions', 0, 'expression')), /system:serviceaccount:podvirt:podvirt-handler/);
      assert.match(JSON.stringify(at(policy, 'spec', 'variables')), /authentication\.kubernetes\.io\/node-name/);
      assert.equal(at(find(manifests, 'ValidatingAdmissionPolicyBinding', name), 'spec', 'policyName'), name);
    }
    const nodePolicy = JSON.stringify(at(find(manifests, 'ValidatingAdmissionPolicy', 'podvirt-handler-node-restriction'), 'spec', 'validations'));
    assert.match(nodePolicy, /object\.metadata\.name == variables\.nodeName/);
    // A migration's target handler writes its part of migrationState on a VMI still of the source node.
    const vmiPolicy = JSON.stringify(at(find(manifests, 'ValidatingAdmissionPolicy', 'podvirt-handler-vmi-restriction'), 'spec'));
    assert.match(vmiPolicy, /oldObject\.status\.migrationState\.targetNode/);
    assert.match(vmiPolicy, /variables\.oldTarget == variables\.nodeName/);
  });

  test('hostDisk: the gate is off in the manifests, and a policy asks the authorizer for the verb use on virtualmachineinstances/hostdisk', () => {
    // The testbed API server evaluates no CEL: the policy's shape is checked here, its
    // expressions run only on a real control plane.
    const args = (at(container(find(manifests, 'Deployment', 'podvirt-controller')), 'args') as string[]).join(' ');
    assert.doesNotMatch(args, /feature-gates|host-disk/, 'the install leaves hostDisk off');
    const role = find(manifests, 'ClusterRole', 'podvirt-host-disk');
    assert.deepEqual(at(role, 'rules'), [{ apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances/hostdisk'], verbs: ['use'] }]);
    assert.equal(manifests.filter((m) => String(at(m.doc, 'roleRef', 'name')) === 'podvirt-host-disk').length, 0, 'bound by the admin, never by the install');
    const policy = find(manifests, 'ValidatingAdmissionPolicy', 'podvirt-host-disk');
    assert.equal(at(policy, 'spec', 'failurePolicy'), 'Fail');
    assert.deepEqual(at(policy, 'spec', 'matchConstraints', 'resourceRules'), [
      { apiGroups: ['kubevirt.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['virtualmachineinstances'] },
    ]);
    const match = String(at(policy, 'spec', 'matchConditions', 0, 'expression'));
    assert.match(match, /object\.spec\.volumes\.exists\(v, has\(v\.hostDisk\)\)/);
    assert.match(match, /object\.spec\.volumes != oldObject\.spec\.volumes/, 'a finalizer or label write is not matched');
    const check = String(at(policy, 'spec', 'validations', 0, 'expression')).replace(/\s+/g, '');
    assert.equal(check, "authorizer.group('kubevirt.io').resource('virtualmachineinstances').subresource('hostdisk').namespace(request.namespace).check('use').allowed()");
    assert.match(String(at(policy, 'spec', 'validations', 0, 'messageExpression')), /ClusterRole podvirt-host-disk/);
    const binding = find(manifests, 'ValidatingAdmissionPolicyBinding', 'podvirt-host-disk');
    assert.equal(at(binding, 'spec', 'policyName'), 'podvirt-host-disk');
    assert.deepEqual(at(binding, 'spec', 'validationActions'), ['Deny']);
  });

  test('examples: the test guest, the cloud-init and the masquerade VMI and the VM are valid for podvirt; the GPU one is refused naming the field', () => {
    const examples = manifests.filter((m) => m.file.startsWith('manifests/examples/'));
    const byName = new Map(examples.map((m) => [String(at(m.doc, 'metadata', 'name')), m.doc]));
    assert.deepEqual([...byName.keys()].sort(), ['testvm', 'testvm-cloudinit', 'testvm-gpu', 'testvm-net', 'testvm-vm']);
    // The VM: KubeVirt's user-guide shape, Halted, its template the test guest booted as the e2e suites do.
    const vm = byName.get('testvm-vm');
    assert.equal(at(vm, 'kind'), 'VirtualMachine');
    assert.deepEqual(validateVm(vm), []);
    assert.equal(at(vm, 'spec', 'runStrategy'), 'Halted');
    assert.equal(at(vm, 'spec', 'template', 'spec', 'domain', 'firmware', 'kernelBoot', 'kernelArgs'), guestImage().kernelArgs);
    assert.equal(at(vm, 'spec', 'template', 'spec', 'volumes', 0, 'containerDisk', 'image'), 'podvirt/test-guest:latest');
    const guest = guestImage();
    for (const name of ['testvm', 'testvm-cloudinit', 'testvm-net']) {
      const vmi = byName.get(name);
      assert.deepEqual(checkVmi(vmi), [], name);
      assert.equal(at(vmi, 'spec', 'domain', 'firmware', 'kernelBoot', 'kernelArgs'), guest.kernelArgs, `${name} boots the guest as the e2e suites do`);
      assert.equal(at(vmi, 'spec', 'volumes', 0, 'containerDisk', 'image'), 'podvirt/test-guest:latest');
    }
    const volumes = docs(at(byName.get('testvm-cloudinit'), 'spec', 'volumes')).map((v) => Object.keys(v).filter((k) => k !== 'name')[0]);
    assert.deepEqual(volumes, ['containerDisk', 'emptyDisk', 'cloudInitNoCloud']);
    const errors = checkVmi(byName.get('testvm-gpu'));
    assert.deepEqual(errors.map((e) => [e.field, e.type]), [['spec.domain.devices.gpus[0]', 'NotSupported']]);
  });
});
