// The identity a per-VMI child logger carries, the same three fields in every process
// (controller, handler, launcher), so one query (`uid=…`, or `namespace=… name=…`) follows a VMI
// through all of their logs: `log.child(vmiLogBindings(vmi.metadata))`.

export interface VmiLogBindings {
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  /** Undefined where only the key is known yet; pino leaves it out. */
  readonly uid: string | undefined;
}

export function vmiLogBindings(vmi: { readonly namespace?: string | undefined; readonly name?: string | undefined; readonly uid?: string | undefined }): VmiLogBindings {
  return { namespace: vmi.namespace, name: vmi.name, uid: vmi.uid };
}
