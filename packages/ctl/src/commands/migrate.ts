// `podvirtctl migrate vmi NAME`: creates a VirtualMachineInstanceMigration for the VMI and
// prints its name (the controller does the rest; `kubectl get vmim -w` follows it).
// `podvirtctl migrate-cancel vmi NAME`: deletes the VMI's unfinished migration, which cancels it.
// What the controller would refuse anyway (a VMI that is not Running or not LiveMigratable) is
// said here first, before anything is created, with the VMI's own reason.
import { isFinalMigrationPhase, migrationFor, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import type { node } from '@podvirt/proto';
import type { MigrationApi } from '../migration-api.js';
import type { CommandResult } from './command-result.js';

/** A refusal of the command itself: the VMI is missing or cannot move now. */
export class MigrateError extends Error {
  override readonly name = 'MigrateError';
  constructor(
    readonly code: 'CTL_ERR_VMI_NOT_FOUND' | 'CTL_ERR_VMI_NOT_RUNNING' | 'CTL_ERR_NOT_MIGRATABLE' | 'CTL_ERR_MIGRATION_IN_PROGRESS' | 'CTL_ERR_NO_MIGRATION_IN_PROGRESS',
    message: string,
  ) {
    super(message);
  }
}

function unfinished(all: readonly VirtualMachineInstanceMigration[], vmiName: string): VirtualMachineInstanceMigration[] {
  return all.filter((m) => m.spec?.vmiName === vmiName && !isFinalMigrationPhase(m.status?.phase) && m.metadata.deletionTimestamp == null);
}

function checkMovable(vmi: VirtualMachineInstance, ref: string): void {
  const phase = vmi.status?.phase ?? '';
  if (phase !== 'Running') throw new MigrateError('CTL_ERR_VMI_NOT_RUNNING', `VMI ${ref} is ${phase === '' ? 'not started' : phase}, not Running: only a running VMI can be migrated`);
  const migratable = vmi.status?.conditions?.find((c) => c.type === 'LiveMigratable');
  if (migratable !== undefined && migratable.status !== 'True') {
    throw new MigrateError('CTL_ERR_NOT_MIGRATABLE', `VMI ${ref} is not live migratable: ${migratable.reason ?? 'LiveMigratable=False'}: ${migratable.message ?? ''}`.trimEnd());
  }
}

export async function runMigrate(api: MigrationApi, target: node.VmiRef, cancel: boolean, signal: AbortSignal): Promise<CommandResult> {
  const ref = `${target.namespace}/${target.name}`;
  if (cancel) return runCancel(api, target, ref, signal);
  const vmi = await api.readVmi(target.namespace, target.name, signal);
  if (vmi === undefined) throw new MigrateError('CTL_ERR_VMI_NOT_FOUND', `VMI ${ref} not found`);
  checkMovable(vmi, ref);
  const [running] = unfinished(await api.listMigrations(target.namespace, signal), target.name);
  if (running !== undefined) {
    throw new MigrateError('CTL_ERR_MIGRATION_IN_PROGRESS', `VMI ${ref} is already migrating (${running.metadata.name ?? ''}, ${running.status?.phase ?? 'Pending'}); cancel it with "podvirtctl migrate-cancel vmi ${target.name} -n ${target.namespace}"`);
  }
  const created = await api.createMigration(migrationFor(target.namespace, target.name), signal);
  const name = created.metadata.name ?? '';
  return {
    data: { name, namespace: target.namespace, vmiName: target.name },
    text: `${name}\n`,
    note: `migrating VMI ${ref}; follow it with: kubectl get vmim ${name} -n ${target.namespace} -w\n`,
  };
}

async function runCancel(api: MigrationApi, target: node.VmiRef, ref: string, signal: AbortSignal): Promise<CommandResult> {
  const found = unfinished(await api.listMigrations(target.namespace, signal), target.name);
  if (found.length === 0) throw new MigrateError('CTL_ERR_NO_MIGRATION_IN_PROGRESS', `VMI ${ref} has no migration in progress`);
  const names: string[] = [];
  for (const m of found) {
    const name = m.metadata.name ?? '';
    if (await api.deleteMigration(target.namespace, name, signal)) names.push(name);
  }
  return {
    data: { cancelled: names, namespace: target.namespace, vmiName: target.name },
    text: names.map((n) => `${n}\n`).join(''),
    note: `cancelling the migration of VMI ${ref}; the VMI stays on its node unless the switch-over already happened\n`,
  };
}
