/**
 * What every controller of the sim shares, in controller-runtime's shape: a work queue on the sim
 * clock fed by the store's change events. A controller says which keys a change concerns
 * (`keysFor`) and how to bring one key to its desired state (`reconcile`); each key is reconciled
 * after the controller latency, at most once per firing.
 */
import type { StoreEvent } from './api/store.js';
import type { ModelContext } from './models/model-context.js';
import { nsName, WorkQueue, type ReconcileResult } from './models/work-queue.js';

export abstract class Reconciler {
  protected readonly queue: WorkQueue;

  protected constructor(
    protected readonly ctx: ModelContext,
    queueName: string,
  ) {
    this.queue = new WorkQueue(
      ctx.clock,
      queueName,
      ctx.timings.controllerLatencyMs,
      (key) => this.reconcile(key),
      ctx.errors,
    );
    ctx.api.store.subscribe((event) => {
      for (const key of this.keysFor(event)) this.queue.add(key);
    });
  }

  /** The keys (`namespace/name`) a change in the store concerns, in the order to queue them. */
  protected abstract keysFor(event: StoreEvent): readonly string[];

  abstract reconcile(key: string): ReconcileResult | void;

  stop(): void {
    this.queue.stop();
  }
}

/**
 * controller-runtime's `For(resource).Owns(owned...)`: the key of a changed object of `resource`,
 * or of the `ownerKind` object that controls a changed object of one of `owned`.
 */
export function ownOrOwnerKey(
  event: StoreEvent,
  resource: string,
  ownerKind: string,
  owned: readonly string[],
): string[] {
  const meta = event.object.metadata;
  if (event.resource === resource) return [nsName(meta.namespace, meta.name as string)];
  if (!owned.includes(event.resource)) return [];
  const owner = meta.ownerReferences?.find((r) => r.controller && r.kind === ownerKind);
  return owner ? [nsName(meta.namespace, owner.name)] : [];
}

/** controllerutil.AddFinalizer: adds the finalizers an object lacks, in the order given. */
export function addFinalizers(
  ctx: ModelContext,
  actor: string,
  resource: string,
  ns: string | undefined,
  name: string,
  finalizers: readonly string[],
): void {
  ctx.api.modify(actor, resource, ns, name, (o) => {
    const list = o.metadata.finalizers ?? [];
    for (const f of finalizers) if (!list.includes(f)) list.push(f);
    o.metadata.finalizers = list;
  });
}

/** controllerutil.RemoveFinalizer. */
export function removeFinalizer(
  ctx: ModelContext,
  actor: string,
  resource: string,
  ns: string | undefined,
  name: string,
  finalizer: string,
): void {
  ctx.api.modify(actor, resource, ns, name, (o) => {
    o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  });
}
