// What the handler knows about a VMI's launcher, as decide() consumes it.

export const LauncherState = {
  /** Connected and answering; the cached domain is authoritative. */
  Ready: 'ready',
  /** The pod directory exists but the socket does not yet (inside the start-up allowance). */
  Initializing: 'initializing',
  /** A socket exists but does not answer yet (inside the watchdog timeout): domain unknown. */
  Unreachable: 'unreachable',
  /** No pod, the socket vanished, or silence past the watchdog or start-up allowance. */
  Unresponsive: 'unresponsive',
} as const;

export type LauncherState = (typeof LauncherState)[keyof typeof LauncherState];
