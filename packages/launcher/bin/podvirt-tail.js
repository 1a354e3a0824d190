#!/usr/bin/env node
// The console log tail as one bundled module (scripts/bundle.mjs, run by `pnpm run build`), as
// the launcher image holds it.
import '../dist/bundle/podvirt-tail.mjs';
