/** Index from owner uid to dependents, kept current from the store's change stream. */
import type { ObjectStore } from './store.js';

export interface ObjectLocation {
  resource: string;
  namespace: string | undefined;
  name: string;
}

export class DependentsIndex {
  private readonly byOwner = new Map<string, Map<string, ObjectLocation>>();
  private readonly byUid = new Map<string, ObjectLocation>();

  constructor(store: ObjectStore) {
    store.subscribe((ev) => {
      const m = ev.object.metadata;
      const loc: ObjectLocation = {
        resource: ev.resource,
        namespace: m.namespace,
        name: m.name as string,
      };
      const key = `${ev.resource}|${m.namespace ?? ''}|${m.name}`;
      for (const ref of ev.previous?.metadata.ownerReferences ?? [])
        this.byOwner.get(ref.uid)?.delete(key);
      if (ev.type === 'DELETED') {
        this.byUid.delete(m.uid as string);
        return;
      }
      this.byUid.set(m.uid as string, loc);
      for (const ref of m.ownerReferences ?? []) {
        let set = this.byOwner.get(ref.uid);
        if (!set) this.byOwner.set(ref.uid, (set = new Map()));
        set.set(key, loc);
      }
    });
  }

  of(ownerUid: string): ObjectLocation[] {
    return [...(this.byOwner.get(ownerUid)?.values() ?? [])];
  }

  exists(uid: string): boolean {
    return this.byUid.has(uid);
  }

  locate(uid: string): ObjectLocation | undefined {
    return this.byUid.get(uid);
  }
}
