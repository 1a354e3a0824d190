import { request, type ServerResponse } from 'node:http';
import { ApiError } from './errors.js';
import { arr, isObject, obj, str, type JsonObject } from './json.js';

const forwarded = ['container', 'follow', 'tailLines', 'timestamps', 'sinceSeconds', 'sinceTime', 'limitBytes', 'previous'];

/**
 * pods/log: like kube-apiserver, this proxies to the kubelet of the pod's node, found
 * through the Node's InternalIP and `status.daemonEndpoints.kubeletEndpoint.Port`.
 */
export function proxyPodLog(pod: JsonObject, node: JsonObject | undefined, query: URLSearchParams, res: ServerResponse, signal: AbortSignal): void {
  const name = str(obj(pod['metadata'])?.['name']) ?? '';
  const namespace = str(obj(pod['metadata'])?.['namespace']) ?? '';
  const containers = arr(obj(pod['spec'])?.['containers']).filter(isObject).map((c) => str(c['name']) ?? '');
  let container = query.get('container') ?? undefined;
  if (container === undefined || container === '') {
    if (containers.length !== 1) {
      throw ApiError.badRequest(`a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`);
    }
    container = containers[0] ?? '';
  } else if (!containers.includes(container) && !arr(obj(pod['spec'])?.['initContainers']).filter(isObject).some((c) => str(c['name']) === container)) {
    throw ApiError.badRequest(`container ${container} is not valid for pod ${name}`);
  }
  const nodeName = str(obj(pod['spec'])?.['nodeName']);
  if (nodeName === undefined) throw ApiError.badRequest(`pod ${name} does not have a host assigned`);
  const status = obj(node?.['status']) ?? {};
  const host = str(arr(status['addresses']).filter(isObject).find((a) => a['type'] === 'InternalIP')?.['address']);
  const port = obj(obj(status['daemonEndpoints'])?.['kubeletEndpoint'])?.['Port'];
  if (host === undefined || typeof port !== 'number' || port === 0) {
    throw ApiError.badRequest(`node ${nodeName} has no kubelet endpoint to read logs of pod ${name} from`);
  }
  const params = new URLSearchParams();
  for (const key of forwarded) {
    const value = query.get(key);
    if (value !== null && key !== 'container') params.set(key, value);
  }
  const path = `/containerLogs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}?${params.toString()}`;
  const upstream = request({ host, port, path, method: 'GET', signal }, (reply) => {
    res.writeHead(reply.statusCode ?? 502, { 'Content-Type': reply.headers['content-type'] ?? 'text/plain' });
    res.flushHeaders();
    reply.pipe(res);
  });
  upstream.on('error', (err) => {
    if (!res.headersSent) {
      const status = ApiError.internal(err).toStatus();
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(status));
    } else {
      res.destroy();
    }
  });
  upstream.end();
}
