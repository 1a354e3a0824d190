// What one reconcile pass does, as decide() chooses it and the executor carries it out.

export type Action =
  /** Make the domain match the VMI (define, start, resume): the launcher's Sync. */
  | { readonly type: 'sync' }
  /** Graceful stop in progress: send Shutdown now when `send`, look again after `requeueAfterMs`. */
  | { readonly type: 'shutdown'; readonly send: boolean; readonly first: boolean; readonly requeueAfterMs: number }
  /** Destroy now: no grace period, or it expired. */
  | { readonly type: 'kill'; readonly reason: 'no-grace' | 'grace-expired'; readonly requeueAfterMs: number }
  /**
   * The domain is down or unwanted: undefine it when the launcher can still be asked, and
   * drop local state when the VMI no longer needs it (gone or final).
   */
  | { readonly type: 'delete'; readonly undefine: boolean; readonly cleanup: boolean }
  /** Only the status changes (phase moves, launcher gone). */
  | { readonly type: 'updateStatus' }
  /** Nothing to do now; look again later when `requeueAfterMs` is set. */
  | { readonly type: 'nothing'; readonly why: string; readonly requeueAfterMs?: number };
