// The scheduler process of `testbed up`: runs until SIGTERM/SIGINT.
import { KubeConfig } from '@kubernetes/client-node';
import { parseArgs } from 'node:util';
import { destination, pino } from 'pino';
import { Scheduler } from './scheduler.js';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string' } } });
const log = pino({ name: 'testbed-scheduler' }, destination({ sync: true }));
const kubeConfig = new KubeConfig();
if (values.kubeconfig === undefined) kubeConfig.loadFromDefault();
else kubeConfig.loadFromFile(values.kubeconfig);
const scheduler = new Scheduler({ kubeConfig, logger: log });
await scheduler.start();
log.info('scheduling');
const stop = (): void => {
  void scheduler.close().then(() => log.info('stopped'));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
