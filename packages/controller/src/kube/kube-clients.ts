// VmiClient, MigrationClient and PodClient over kube-runtime's ResourceClient: each failure
// becomes a ControllerError (apiFailure) naming what was attempted.

import type { V1Pod } from '@kubernetes/client-node';
import { MIGRATION_RESOURCE, VMI_RESOURCE, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { PODS, ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import { apiFailure } from './api-failure.js';
import { isNotFound } from '../controller-error.js';
import type { EvacuationClient, MetadataPatch, MigrationClient, PodClient, VmiClient } from './cluster-roles.js';

async function mapped<R>(what: string, call: () => Promise<R>): Promise<R> {
  try {
    return await call();
  } catch (err) {
    throw apiFailure(err, what);
  }
}

function ref(object: { metadata: { namespace?: string | undefined; name?: string | undefined } }): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

/** The metadata of a merge patch: the lists given replace the object's whole lists. */
export function metadataOf(patch: MetadataPatch): Record<string, unknown> {
  return {
    ...(patch.labels === undefined ? {} : { labels: patch.labels }),
    ...(patch.finalizers === undefined ? {} : { finalizers: patch.finalizers }),
    ...(patch.ownerReferences === undefined ? {} : { ownerReferences: patch.ownerReferences }),
    ...(patch.resourceVersion === undefined ? {} : { resourceVersion: patch.resourceVersion }),
  };
}

export function kubeVmiClient(client: KubeClient): VmiClient {
  const vmis = new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE);
  return {
    read: (namespace, name, signal) => mapped(`get VMI ${namespace}/${name}`, () => vmis.get(namespace, name, signal)),
    replaceStatus: (vmi, signal) => mapped(`update status of VMI ${ref(vmi)}`, () => vmis.replaceStatus(vmi, signal)),
    patchMetadata: (namespace, name, patch, signal) =>
      mapped(`patch VMI ${namespace}/${name}`, () => vmis.mergePatch(namespace, name, { metadata: metadataOf(patch) }, signal)),
  };
}

export function kubeMigrationClient(client: KubeClient): MigrationClient {
  const migrations = new ResourceClient<VirtualMachineInstanceMigration>(client, MIGRATION_RESOURCE);
  return {
    readMigration: (namespace, name, signal) => mapped(`get migration ${namespace}/${name}`, () => migrations.get(namespace, name, signal)),
    replaceMigrationStatus: (vmim, signal) => mapped(`update status of migration ${ref(vmim)}`, () => migrations.replaceStatus(vmim, signal)),
    setMigrationFinalizers: (namespace, name, finalizers, resourceVersion, signal) =>
      mapped(`patch migration ${namespace}/${name}`, () => migrations.mergePatch(namespace, name, { metadata: metadataOf({ finalizers, ...(resourceVersion === undefined ? {} : { resourceVersion }) }) }, signal)),
  };
}

export function kubePodClient(client: KubeClient): PodClient {
  const pods = new ResourceClient<V1Pod>(client, PODS);
  return {
    create: (namespace, pod, signal) => mapped(`create pod in ${namespace}`, () => pods.create(namespace, pod, signal)),
    // Gone already, or replaced by a namesake (the UID precondition failed): ours is gone either way.
    delete: async (namespace, name, uid, signal) => {
      await mapped(`delete pod ${namespace}/${name}`, () => pods.delete(namespace, name, { uid }, signal));
    },
  };
}

export function kubeEvacuationClient(client: KubeClient): EvacuationClient {
  const migrations = new ResourceClient<VirtualMachineInstanceMigration>(client, MIGRATION_RESOURCE);
  const vmis = new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE);
  return {
    createMigration: (namespace, vmim, signal) => mapped(`create migration of VMI ${namespace}/${vmim.spec.vmiName}`, () => migrations.create(namespace, vmim, signal)),
    clearEvacuation: async (namespace, name, signal) => {
      try {
        await mapped(`clear the evacuation of VMI ${namespace}/${name}`, () => vmis.mergePatchStatus(namespace, name, { status: { evacuationNodeName: null } }, signal));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
  };
}
