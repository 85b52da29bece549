/**
 * Deletion semantics: finalizers and deletionTimestamp, graceful pod deletion (the kubelet
 * finishes it), propagation policies, and ownerReference garbage collection.
 */
import type { Clock } from '../../clock.js';
import { deepClone, isoTime, type KubeObject, type Pod } from '../types.js';
import { ApiError, type StatusBody } from './errors.js';
import type { DependentsIndex } from './gc.js';
import type { DeleteOptions, KubeApi } from './kube-api.js';
import { sameJson } from './object-utils.js';
import { resourceKey, type ResourceDef } from './resources.js';
import type { ObjectStore } from './store.js';

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';

export class Deletion {
  constructor(
    private readonly api: KubeApi,
    private readonly store: ObjectStore,
    private readonly dependents: DependentsIndex,
    private readonly clock: Clock,
  ) {}

  perform(
    def: ResourceDef,
    existing: KubeObject,
    options: DeleteOptions,
  ): { object: KubeObject; status?: StatusBody } {
    const key = resourceKey(def);
    const m = existing.metadata;
    const policy = options.propagationPolicy ?? 'Background';
    let grace = 0;
    if (def.plural === 'pods') {
      const pod = existing as Pod;
      const terminal = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
      grace = options.gracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
      if (!pod.spec.nodeName || terminal) grace = 0;
      if (m.deletionGracePeriodSeconds !== undefined)
        grace = Math.min(grace, m.deletionGracePeriodSeconds);
    }
    const finalizers = [...(m.finalizers ?? [])];
    if (
      policy === 'Foreground' &&
      this.dependents.of(m.uid as string).length > 0 &&
      !finalizers.includes(FOREGROUND)
    )
      finalizers.push(FOREGROUND);
    if (policy === 'Orphan' && !finalizers.includes(ORPHAN)) finalizers.push(ORPHAN);
    if (finalizers.length === 0 && grace === 0) {
      const gone = this.store.remove(key, m.namespace, m.name as string) as KubeObject;
      this.afterRemoval(gone);
      return { object: gone };
    }
    const next = deepClone(existing);
    const deadline = this.clock.now() + grace * 1000;
    const current = m.deletionTimestamp ? Date.parse(m.deletionTimestamp) : Infinity;
    if (deadline < current) next.metadata.deletionTimestamp = isoTime(deadline);
    next.metadata.deletionGracePeriodSeconds = grace;
    next.metadata.finalizers = finalizers;
    if (m.deletionTimestamp === undefined) next.metadata.generation = (m.generation ?? 1) + 1;
    let stored = sameJson(next, existing) ? existing : this.store.put(key, next);
    if (policy === 'Orphan') stored = this.orphanDependents(def, stored);
    if (policy === 'Foreground') this.collectDependents(stored, 'Background');
    return { object: this.finishIfDone(def, stored) ?? stored };
  }

  /** Removes an object once it is being deleted, has no finalizers and (pods) its grace is over. */
  finishIfDone(def: ResourceDef, obj: KubeObject): KubeObject | undefined {
    const m = obj.metadata;
    if (!m.deletionTimestamp || (m.finalizers?.length ?? 0) > 0) return undefined;
    if (def.plural === 'pods' && (m.deletionGracePeriodSeconds ?? 0) > 0) return undefined;
    const gone = this.store.remove(resourceKey(def), m.namespace, m.name as string);
    if (gone) this.afterRemoval(gone);
    return gone;
  }

  private orphanDependents(def: ResourceDef, owner: KubeObject): KubeObject {
    const uid = owner.metadata.uid as string;
    for (const d of this.dependents.of(uid)) {
      this.api.modify('garbage-collector', d.resource, d.namespace, d.name, (o) => {
        o.metadata.ownerReferences = (o.metadata.ownerReferences ?? []).filter(
          (r) => r.uid !== uid,
        );
        if (o.metadata.ownerReferences.length === 0) delete o.metadata.ownerReferences;
      });
    }
    const result = this.api.modify(
      'garbage-collector',
      def,
      owner.metadata.namespace,
      owner.metadata.name as string,
      (o) => {
        o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== ORPHAN);
      },
    );
    return result ?? owner;
  }

  /** Garbage collection: delete the dependents of a removed (or foreground-deleting) owner. */
  private collectDependents(owner: KubeObject, policy: 'Background'): void {
    const uid = owner.metadata.uid as string;
    for (const d of this.dependents.of(uid)) {
      const dep = this.store.peek(d.resource, d.namespace, d.name);
      if (!dep || dep.metadata.deletionTimestamp) continue;
      const others = (dep.metadata.ownerReferences ?? []).filter(
        (r) => r.uid !== uid && this.dependents.exists(r.uid),
      );
      if (others.length > 0) {
        this.api.modify('garbage-collector', d.resource, d.namespace, d.name, (o) => {
          o.metadata.ownerReferences = (o.metadata.ownerReferences ?? []).filter(
            (r) => r.uid !== uid,
          );
        });
        continue;
      }
      try {
        this.api.delete('garbage-collector', d.resource, d.namespace, d.name, {
          propagationPolicy: policy,
        });
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
  }

  private afterRemoval(gone: KubeObject): void {
    this.collectDependents(gone, 'Background');
    // Foreground owners waiting on this dependent.
    for (const ref of gone.metadata.ownerReferences ?? []) {
      const owner = this.dependents.locate(ref.uid);
      if (!owner) continue;
      const o = this.store.peek(owner.resource, owner.namespace, owner.name);
      if (!o?.metadata.finalizers?.includes(FOREGROUND)) continue;
      const blocking = this.dependents.of(ref.uid).some((d) => {
        const dep = this.store.peek(d.resource, d.namespace, d.name);
        return dep?.metadata.ownerReferences?.some(
          (r) => r.uid === ref.uid && r.blockOwnerDeletion,
        );
      });
      if (!blocking) {
        this.api.modify('garbage-collector', owner.resource, owner.namespace, owner.name, (x) => {
          x.metadata.finalizers = (x.metadata.finalizers ?? []).filter((f) => f !== FOREGROUND);
        });
      }
    }
  }
}
