export { convertVmi, type ConvertedDomain } from './convert/convert-vmi.js';
export type { ConverterContext, ImageFile } from './convert/context.js';
export { domainName } from './convert/domain-name.js';
export { LauncherError, type LauncherErrorCode } from './errors.js';
export { FlagError, parseFlags, type LauncherFlags } from './flags.js';
export { runLauncher, type LauncherOptions, type LibvirtDirs } from './launcher.js';
export { INIT_SOCKET, READY_SOCKET } from './server/cmd-server.js';
export { toKubevirtState, type KubevirtState } from './domain/state-map.js';
export { LIBVIRTD, VIRTQEMUD, daemonConf, qemuConf, type DaemonKind } from './daemon/daemon-config.js';
