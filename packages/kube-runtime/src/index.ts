export { ItemBackoff, type ItemBackoffOptions } from './item-backoff.js';
export { WorkQueue } from './work-queue.js';
