// How soon a reconcile (of a VMI, or of a migration's target) looks again at its launcher.

/** A launcher that does not answer or is being stopped. */
export const LAUNCHER_WAIT_MS = 1_000;
/**
 * A launcher still initialising: KubeVirt looks again after 1 s; the socket's appearance is the
 * moment a new VM can start, and checking it is one stat, so podvirt looks every 200 ms.
 */
export const LAUNCHER_INIT_POLL_MS = 200;
