// The handler's only write to its Node: a JSON merge patch of labels and annotations. A role
// interface so that the heartbeat is tested against a fake.

export interface NodeMetadataPatch {
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface NodePatcher {
  patchMetadata(nodeName: string, patch: NodeMetadataPatch, signal: AbortSignal): Promise<void>;
}
