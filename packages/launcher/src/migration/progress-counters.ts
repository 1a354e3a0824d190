// The counters of a migration's progress read from libvirt's job statistics: data to move,
// moved and left, passes over memory, and the two rates KubeVirt exports while a migration runs
// (the guest's dirty rate and the memory transfer rate), both in bytes per second.
import { jobStat, type JobStats } from '@podvirt/libvirt';
import type { cmd } from '@podvirt/proto';

export type ProgressCounters = Pick<cmd.MigrationProgress,
  'dataTotal' | 'dataProcessed' | 'dataRemaining' | 'iterations' | 'memoryDirtyRateBps' | 'memoryTransferBps'>;

export function progressCounters(stats: JobStats): ProgressCounters {
  // libvirt counts the dirty rate in pages per second; the page size comes with it.
  const dirtyPages = jobStat(stats, 'memory_dirty_rate');
  const pageSize = jobStat(stats, 'memory_page_size');
  return {
    dataTotal: jobStat(stats, 'data_total') ?? 0,
    dataProcessed: jobStat(stats, 'data_processed') ?? 0,
    dataRemaining: jobStat(stats, 'data_remaining') ?? 0,
    iterations: jobStat(stats, 'memory_iteration') ?? 0,
    memoryDirtyRateBps: dirtyPages === undefined || pageSize === undefined ? 0 : dirtyPages * pageSize,
    memoryTransferBps: jobStat(stats, 'memory_bps') ?? 0,
  };
}
