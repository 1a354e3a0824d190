// The API server process of `testbed up`: serves until SIGTERM/SIGINT, then closes.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { destination, pino } from 'pino';
import { parseAllDocuments } from 'yaml';
import { startApiServer } from './api-server.js';
import type { JsonObject } from './json.js';
import { writeKubeconfig } from './kubeconfig.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    crd: { type: 'string', multiple: true, default: [] },
    kubeconfig: { type: 'string' },
    'history-size': { type: 'string', default: '1000' },
  },
});
const log = pino({ name: 'testbed-apiserver' }, destination({ sync: true }));
const crds: JsonObject[] = [];
for (const file of values.crd) {
  for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) crds.push(doc.toJSON() as JsonObject);
}
const server = await startApiServer({ port: Number(values.port), crds, historySize: Number(values['history-size']), logger: log });
if (values.kubeconfig !== undefined) await writeKubeconfig(values.kubeconfig, server.url);
log.info({ url: server.url }, 'serving');
const stop = (): void => {
  void server.close().then(() => log.info('stopped'));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
