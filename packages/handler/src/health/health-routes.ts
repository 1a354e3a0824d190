// The handler's probe routes: kube-runtime's /healthz and /readyz, ready when its informers have
// synced and its node API listens; /readyz names what is missing when it is not.

import { probeRoutes, type EndpointRoute } from '@podvirt/kube-runtime';
import type { Readiness } from './readiness.js';

export function healthRoutes(readiness: Readiness): Record<string, EndpointRoute> {
  return probeRoutes(() => readiness.report().failing);
}
