export { Scheduler, type SchedulerOptions } from './scheduler.js';
export { EventRecorder, type RecordedEvent } from './event-recorder.js';
export { pickNode, type Placement } from './pick-node.js';
