import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_MACHINE_TYPE, NON_ROOT_UID, vmiLogBindings, type DefaultedVmi } from '@podvirt/api';
import { GoFlagError } from '@podvirt/api/go-flags';
import { LibvirtClient } from '@podvirt/libvirt';
import type { Logger } from 'pino';
import { serialPaths } from './convert/console.js';
import { domainName } from './convert/domain-name.js';
import { acpiEnabled } from './convert/features.js';
import { decideDomainType } from './convert/hypervisor.js';
import { inspectAndConvert } from './inspect-and-convert.js';
import { DEFAULT_LIBVIRT_DIRS, startDaemon, type LibvirtDirs, type StartedDaemon } from './daemon/start-daemon.js';
import { DomainManager } from './domain/domain-manager.js';
import { GuestAgentOps } from './domain/guest-agent-ops.js';
import { LibvirtDomainConnection } from './domain/libvirt-domain-connection.js';
import { MigrationSource } from './migration/migration-source.js';
import { ReconnectingConnection } from './domain/reconnecting-connection.js';
import { WatchHub } from './domain/watch-hub.js';
import { waitForEnd } from './domain/wait-for-end.js';
import { LauncherError } from './errors.js';
import type { LauncherFlags } from './flags.js';
import { presentDeviceNodes } from './host/device-nodes.js';
import { probeKvm, type KvmProbeResult } from './host/kvm-probe.js';
import { readNodeFacts, type NodeFacts } from './host/node-facts.js';
import { restrictSockets } from './host/restrict-sockets.js';
import { toolVersion } from './host/tool-versions.js';
import { FileTail } from './logs/file-tail.js';
import { PersistentDisks } from './prepare/persistent-disks.js';
import { HotplugDisks } from './domain/hotplug-disks.js';
import { PodNetworkSetup } from './network/pod-network-setup.js';
import { prepareFiles } from './prepare/prepare-files.js';
import { CmdServer } from './server/cmd-server.js';

export type { LibvirtDirs };

export interface LauncherOptions {
  readonly flags: LauncherFlags;
  readonly standaloneVmi?: DefaultedVmi;
  readonly log: Logger;
  readonly libvirtDirs?: LibvirtDirs;
  readonly kvmProbe?: () => Promise<KvmProbeResult>;
  readonly emulator?: string;
  /**
   * A daemon main.ts started on DEFAULT_LIBVIRT_DIRS before it loaded the rest of the launcher,
   * so the two overlap; started here when absent. Stopped here either way.
   */
  readonly daemon?: Promise<StartedDaemon>;
  /** This process's pid, as libvirt and qemu in the same PID namespace see it. */
  readonly pid: number;
}

const SHUTDOWN_RESEND_MS = 2_000;
const FINAL_FLUSH_MS = 5_000;

/**
 * One VMI's launcher from start to exit: libvirt daemon, connection, domain manager, cmd
 * server; then it waits until the domain is gone (guest powered off, destroyed at the grace
 * deadline, crashed), delivers the final state to watchers and stops everything. Resolves the
 * process exit code.
 */
export async function runLauncher(o: LauncherOptions, stop: AbortSignal): Promise<number> {
  try {
    return await run(o, stop);
  } catch (err) {
    // A daemon started early for a launcher that cannot run must not outlive it.
    await o.daemon?.then((d) => d.supervisor.close(), () => undefined);
    throw err;
  }
}

async function run(o: LauncherOptions, stop: AbortSignal): Promise<number> {
  const { flags } = o;
  const meta = o.standaloneVmi?.metadata;
  const namespace = flags.namespace ?? meta?.namespace;
  const name = flags.name ?? meta?.name;
  const uid = flags.uid ?? meta?.uid;
  if (!namespace || !name || !uid) throw new GoFlagError(undefined, '--namespace, --name and --uid are required (or STANDALONE_VMI with all three)');
  if (flags.simulateCrash) throw new LauncherError('LAUNCHER_ERR_DAEMON', 'simulated crash (--simulate-crash)');
  const identity = { namespace, name, uid, domain: domainName(namespace, name) };
  const log = o.log.child(vmiLogBindings(identity));
  if (flags.ignored.length > 0) log.info({ flags: flags.ignored }, 'flags not applicable to podvirt, ignored');
  const dirs = o.libvirtDirs ?? DEFAULT_LIBVIRT_DIRS;
  const emulator = o.emulator ?? '/usr/bin/qemu-system-x86_64';

  // The serial console socket and log live here; the log holds whatever the guest printed. It
  // belongs to the guest-console-log container's account, owner-only: that container reads it
  // with no capability. The directory stays root's, as are qemu and its sockets in it; others
  // may only pass through it to the log (the sockets are owner-only).
  const vmiPrivate = join(flags.privateDir, uid);
  await mkdir(vmiPrivate, { recursive: true, mode: 0o711 });
  await chmod(vmiPrivate, 0o711);
  // A migration's unix sockets meet here (the handlers' proxies; an incoming guest's qemu
  // listens here as a target): the same in-pod path on both sides, KubeVirt's directory.
  await mkdir(join(flags.shareDir, 'migrationproxy'), { recursive: true, mode: 0o755 });
  const serialLog = serialPaths(flags, uid).log;
  await writeFile(serialLog, '', { flag: 'a', mode: 0o600 });
  await chmod(serialLog, 0o600);
  if (process.getuid?.() === 0) await chown(serialLog, NON_ROOT_UID, NON_ROOT_UID);
  // Probed while the libvirt daemon starts: neither waits for the other.
  const kvmProbe = (o.kvmProbe ?? (() => probeKvm()))();
  kvmProbe.catch(() => undefined);

  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async (): Promise<void> => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch((err: unknown) => log.warn({ err }, 'cleanup step failed'));
  };
  try {
    const daemon = await (o.daemon ?? startDaemon(dirs, flags.capsCacheDir, log, stop, flags.daemon, flags.virtqemud));
    cleanups.push(() => daemon.supervisor.close());
    // Read now, while the launcher gets ready: the handler's first call (Info) asks for them, and
    // the first Sync waits behind it.
    const versions = lazyVersions(daemon.kind.binary, emulator);
    void versions();
    const kvm = await kvmProbe;
    log.info({ kvm, devices: await presentDeviceNodes() }, 'hypervisor probed');
    const socketPath = daemon.socketPath;
    const conn = new ReconnectingConnection({
      connect: (signal) => LibvirtDomainConnection.connect(socketPath, signal),
      onConnectError: (err) => log.debug({ err }, 'libvirt connect failed, retrying'),
    });
    cleanups.push(() => conn.close());
    await conn.ready({ signal: AbortSignal.any([stop, AbortSignal.timeout(30_000)]) });

    // Read now, for the default machine type, while the handler finds the socket and sends the
    // first Sync, which would otherwise wait for them.
    const nodeFacts = nodeFactsOnce(socketPath, emulator, log);
    prefetchNodeFacts(nodeFacts, kvm.usable, flags.allowEmulation);
    const persistentDisks = new PersistentDisks({ vmiDisksDir: join(flags.privateDir, 'vmi-disks'), devDir: flags.devDir, pid: o.pid, log });
    cleanups.push(() => persistentDisks.close());
    const network = new PodNetworkSetup({
      log,
      stateDir: join(flags.privateDir, uid),
      onAttached: (nics) => {
        manager.tracker.meta.domainInterfaces = nics.map((n) => ({ name: n.ifaceName, mac: n.mac, ipAddresses: [...n.reportedIPs], podInterfaceName: n.podInterfaceName, queueCount: 1 }));
        void manager.tracker.refresh();
      },
    });
    cleanups.push(() => network.close());
    const hub = new WatchHub();
    const manager = new DomainManager({
      conn, identity, hub, log,
      convert: inspectAndConvert(flags, kvm, dirs.run, emulator, persistentDisks, network, nodeFacts),
      prepare: (steps, po) => prepareFiles(steps, { secretsDir: flags.secretsDir, ...(po.signal ? { signal: po.signal } : {}) }),
      acpiEnabled,
      afterStart: async () => {
        const changed = await restrictSockets([join(dirs.lib, 'qemu'), dirs.run, vmiPrivate]);
        if (changed.length > 0) log.debug({ sockets: changed }, 'sockets made owner-only');
      },
      gracePeriodMs: flags.gracePeriodSeconds * 1000,
      shutdownResendMs: SHUTDOWN_RESEND_MS,
      hotplug: new HotplugDisks({ conn, domain: identity.domain, dir: join(flags.shareDir, 'hotplug-disks'), disks: persistentDisks, log: log.child({ subcomponent: 'hotplug' }) }),
    });
    cleanups.push(() => manager.close());
    await manager.tracker.start(stop);
    const agent = new GuestAgentOps({ conn, tracker: manager.tracker, domain: identity.domain, log });
    cleanups.push(() => agent.close());
    const qemuLog = log.child({ subcomponent: 'qemu' });
    const tail = new FileTail({ path: join(dirs.log, 'qemu', `${identity.domain}.log`), onLine: (line) => qemuLog.info(line) });
    cleanups.push(() => tail.close());

    const migration = new MigrationSource({
      socketPath, domain: identity.domain, log: log.child({ subcomponent: 'migration' }),
      publish: (progress) => {
        manager.tracker.meta.migration = progress;
        manager.tracker.changed();
      },
    });
    cleanups.push(() => migration.close());
    const server = await CmdServer.listen({ socketDir: join(flags.shareDir, 'sockets'), manager, agent, hub, migration, log, versions });
    cleanups.push(() => server.close());
    await server.markReady();
    log.info({ socket: server.socketPath }, 'launcher ready');

    if (o.standaloneVmi) {
      await manager.sync(o.standaloneVmi).catch((err: unknown) => log.error({ err }, 'standalone VMI sync failed'));
    }
    return await waitForEnd({ manager, hub, log, qemuTimeoutMs: flags.qemuTimeoutMs, finalFlushMs: FINAL_FLUSH_MS, settle: () => migration.settled() }, stop);
  } finally {
    await cleanup();
    log.info('launcher exited');
  }
}

function prefetchNodeFacts(nodeFacts: (domainType: string, machine: string) => Promise<NodeFacts | undefined>, kvmUsable: boolean, allowEmulation: boolean): void {
  let domainType: string;
  try {
    domainType = decideDomainType(kvmUsable, allowEmulation);
  } catch {
    return; // Each Sync names the problem.
  }
  void nodeFacts(domainType, DEFAULT_MACHINE_TYPE);
}

/**
 * The node's facts for a domain type and machine type, read from the daemon once (at start for
 * the default machine type, or at the first Sync that asks) and kept; when they cannot be read
 * the checks are skipped (libvirt still refuses what it cannot do) and tried again next time.
 */
function nodeFactsOnce(socketPath: string, emulator: string, log: Logger): (domainType: string, machine: string) => Promise<NodeFacts | undefined> {
  const read = new Map<string, Promise<NodeFacts>>();
  return async (domainType, machine) => {
    const key = `${domainType} ${machine}`;
    let facts = read.get(key);
    if (facts === undefined) {
      facts = (async () => {
        const client = await LibvirtClient.connect({ socketPath, uri: 'qemu:///system', timeoutMs: 15_000 });
        try {
          return await readNodeFacts(client, emulator, domainType, machine);
        } finally {
          await client.close().catch(() => undefined);
        }
      })();
      read.set(key, facts);
    }
    try {
      return await facts;
    } catch (err) {
      if (read.get(key) === facts) read.delete(key);
      log.warn({ err }, 'node capabilities unreadable, checks left to libvirt');
      return undefined;
    }
  };
}

function lazyVersions(daemonBinary: string, emulator: string): () => Promise<{ launcher: string; libvirt: string; qemu: string }> {
  let cached: Promise<{ launcher: string; libvirt: string; qemu: string }> | undefined;
  return () => {
    cached ??= (async () => {
      const [pkg, libvirt, qemu] = await Promise.all([
        readFile(new URL('../../package.json', import.meta.url), 'utf8').then((text) => JSON.parse(text) as { version?: string }),
        toolVersion(daemonBinary),
        toolVersion(emulator),
      ]);
      return { launcher: pkg.version ?? '', libvirt, qemu };
    })();
    return cached;
  };
}
