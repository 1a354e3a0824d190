import { createRequire } from 'node:module';
import { MonitorError } from './monitor-error.js';

/** How a child ended, as waitid() reports it: `status` is the exit code or the signal number. */
export interface ChildExit {
  readonly pid: number;
  readonly code: 'exited' | 'killed' | 'dumped' | 'other';
  readonly status: number;
}

/** The addon in `src/native/monitor.cc`, built into `build/Release` by the package's install script. */
export interface NativeBinding {
  setChildSubreaper(): void;
  isChildSubreaper(): boolean;
  /** The exit of `pid` (or of any one child when omitted), left waitable: nothing is reaped. */
  peekExited(pid?: number): ChildExit | undefined;
  /** Reaps exactly `pid` if it has exited; never touches another child. */
  reap(pid: number): ChildExit | undefined;
}

// Relative to dist/src/ once compiled: the addon lives in the package's build/ folder.
const ADDON_PATH = '../../build/Release/podvirt_monitor.node';

export function loadNativeBinding(): NativeBinding {
  const require = createRequire(import.meta.url);
  try {
    return require(ADDON_PATH) as NativeBinding;
  } catch (err) {
    throw new MonitorError(
      'MONITOR_ERR_NATIVE',
      'cannot load the native monitor addon (built by `pnpm install` with node-gyp)',
      { cause: err },
    );
  }
}
