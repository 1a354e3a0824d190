import type { ObjectMeta } from '@podvirt/api';

/** Which VMI a lifecycle call means: a decoded VMI is one, and so is the metadata alone. */
export interface VmiRef {
  readonly metadata?: Pick<ObjectMeta, 'namespace' | 'name' | 'uid'>;
}
