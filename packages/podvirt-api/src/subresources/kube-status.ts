// A refusal as the Kubernetes API writes one (a `Status` object), so kubectl and virtctl print
// its message, and the same text whether it comes as a JSON answer or before a websocket upgrade.

import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export interface KubeStatus {
  readonly code: number;
  readonly message: string;
}

export function kubeStatus(code: number, message: string): KubeStatus {
  return { code, message };
}

export function statusDocument(s: KubeStatus): object {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: s.message, reason: REASONS[s.code] ?? 'Unknown', code: s.code };
}

export function writeJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function writeStatus(res: ServerResponse, s: KubeStatus): void {
  writeJson(res, s.code, statusDocument(s));
}

/** The answer to an upgrade request refused before the handshake: a plain HTTP response, then the socket ends. */
export function writeStatusOnSocket(socket: Duplex, s: KubeStatus): void {
  const text = JSON.stringify(statusDocument(s));
  socket.end(`HTTP/1.1 ${s.code} ${REASONS[s.code] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
}
