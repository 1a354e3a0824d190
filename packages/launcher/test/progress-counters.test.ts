import assert from 'node:assert/strict';
import { test } from 'node:test';
import { progressCounters } from '../src/migration/progress-counters.js';

test('the counters of a running job: bytes, passes, the dirty rate as pages × page size, the transfer rate', () => {
  const c = progressCounters({
    type: 'UNBOUNDED',
    stats: {
      data_total: 200n * 1024n * 1024n, data_processed: 60n * 1024n * 1024n, data_remaining: 140n * 1024n * 1024n,
      memory_iteration: 2n, memory_dirty_rate: 512n, memory_page_size: 4096n, memory_bps: 4_194_304n,
    },
  });
  assert.deepEqual(c, {
    dataTotal: 200 * 1024 * 1024, dataProcessed: 60 * 1024 * 1024, dataRemaining: 140 * 1024 * 1024,
    iterations: 2, memoryDirtyRateBps: 2 * 1024 * 1024, memoryTransferBps: 4_194_304,
  });
});

test('fields libvirt has not reported yet are 0; a dirty rate without its page size is not guessed', () => {
  assert.deepEqual(progressCounters({ type: 'UNBOUNDED', stats: { memory_dirty_rate: 100n } }), {
    dataTotal: 0, dataProcessed: 0, dataRemaining: 0, iterations: 0, memoryDirtyRateBps: 0, memoryTransferBps: 0,
  });
});
