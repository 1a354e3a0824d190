// The kubelet process of `testbed up`: runs until SIGTERM/SIGINT, then stops its pods.
import { KubeConfig } from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { destination, pino } from 'pino';
import { containerRuntimes } from './image-runtime.js';
import { Kubelet } from './kubelet.js';

const { values } = parseArgs({
  options: { kubeconfig: { type: 'string' }, 'node-name': { type: 'string' }, 'root-dir': { type: 'string' }, runtime: { type: 'string', default: 'process' } },
});
const log = pino({ name: 'testbed-kubelet' }, destination({ sync: true }));
if (values['root-dir'] === undefined) throw new Error('--root-dir is required');
const makeRuntime = containerRuntimes[values.runtime];
if (makeRuntime === undefined) throw new Error(`--runtime must be one of: ${Object.keys(containerRuntimes).join(', ')}`);
const kubeConfig = new KubeConfig();
if (values.kubeconfig === undefined) kubeConfig.loadFromDefault();
else kubeConfig.loadFromFile(values.kubeconfig);
const kubelet = new Kubelet({ kubeConfig, nodeName: values['node-name'] ?? hostname(), rootDir: values['root-dir'], logger: log, nodeBinary: process.execPath, runtime: makeRuntime(values['root-dir']) });
await kubelet.start();
const stop = (): void => {
  void kubelet.close().then(() => log.info('stopped'));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
