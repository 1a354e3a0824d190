// The probe routes: /healthz says the process serves requests (a liveness probe must not fail
// on a slow API server, or the kubelet would restart a handler that is merely waiting), /readyz
// says the handler is doing its job — informers synced, node API listening — and names what
// is missing when it is not.

import type { EndpointRoute } from '@podvirt/kube-runtime';
import type { Readiness } from './readiness.js';

export function healthRoutes(readiness: Readiness): Record<string, EndpointRoute> {
  return {
    '/healthz': () => ({ status: 200, contentType: 'text/plain', body: 'ok\n' }),
    '/readyz': () => {
      const report = readiness.report();
      return report.ready
        ? { status: 200, contentType: 'text/plain', body: 'ok\n' }
        : { status: 503, contentType: 'text/plain', body: `not ready: ${report.failing.join(', ')}\n` };
    },
  };
}
