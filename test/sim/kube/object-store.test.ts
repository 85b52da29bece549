import { ObjectStore } from '../../../sim/kube/api/store.js';
import type { KubeObject } from '../../../sim/kube/types.js';

const pod = (namespace: string, name: string): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name } }) as KubeObject;

describe('the Kubernetes twin’s object store', () => {
  it('lists one namespace, or all, sorted by namespace and name, and forgets removed objects', () => {
    const store = new ObjectStore();
    for (const [ns, name] of [
      ['b', 'z'],
      ['a', 'y'],
      ['b', 'x'],
      ['a', 'w'],
    ] as const)
      store.put('pods', pod(ns, name));
    const names = (objects: KubeObject[]) =>
      objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
    expect(names(store.scan('pods', 'b'))).toEqual(['b/x', 'b/z']);
    expect(names(store.scan('pods'))).toEqual(['a/w', 'a/y', 'b/x', 'b/z']);
    store.remove('pods', 'b', 'x');
    expect(names(store.scan('pods', 'b'))).toEqual(['b/z']);
    expect(names(store.scan('pods'))).toEqual(['a/w', 'a/y', 'b/z']);
    expect(store.scan('pods', 'none')).toEqual([]);
  });

  it('keeps the last historyLimit changes however many came: older cursors are expired', () => {
    const store = new ObjectStore({ historyLimit: 3 });
    const rvs: number[] = [];
    for (let i = 0; i < 20; i++) {
      store.put('pods', pod('a', `p${i}`));
      rvs.push(store.currentRv());
    }
    const at = (i: number) => rvs[i] as number;
    // The last three changes are kept: a watch resumes from the fourth-last revision on.
    expect(store.changesSince(at(16))).toHaveLength(3);
    expect(store.changesSince(at(18))).toEqual([
      expect.objectContaining({ type: 'ADDED', rv: at(19) }),
    ]);
    expect(store.changesSince(at(15))).toBe('expired');
    expect(store.oldestResumableRv()).toBe(at(16));
  });
});
