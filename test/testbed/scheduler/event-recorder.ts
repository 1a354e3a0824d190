import { randomBytes } from 'node:crypto';
import type { CoreV1Api, V1ObjectReference } from '@kubernetes/client-node';

export interface RecordedEvent {
  regarding: V1ObjectReference;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Writes core/v1 Events the way client-go's recorder does (named `<object>.<unique hex>`). */
export class EventRecorder {
  constructor(
    private readonly core: CoreV1Api,
    private readonly component: string,
    private readonly host: string,
  ) {}

  async record(event: RecordedEvent): Promise<void> {
    const namespace = event.regarding.namespace ?? 'default';
    const now = new Date();
    await this.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: `${event.regarding.name ?? 'object'}.${randomBytes(8).toString('hex')}`, namespace },
        involvedObject: event.regarding,
        type: event.type,
        reason: event.reason,
        message: event.message,
        source: { component: this.component, host: this.host },
        reportingComponent: this.component,
        reportingInstance: this.host,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
  }
}
