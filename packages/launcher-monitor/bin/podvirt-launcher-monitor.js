#!/usr/bin/env node
// The monitor as one bundled module (scripts/bundle.mjs, run by `pnpm run build`): it is PID 1
// of every launcher pod, so its start is on every VMI's path.
import '../dist/bundle/podvirt-launcher-monitor.mjs';
