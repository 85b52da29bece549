import {
  jsonPatch,
  mergePatch,
  PatchError,
  strategicMergePatch,
} from '../../../sim/kube/api/patch.js';

describe('patches', () => {
  it.each([
    [
      'replaces scalars and removes nulls',
      { a: 1, b: { c: 2, d: 3 } },
      { b: { c: null, e: 4 } },
      { a: 1, b: { d: 3, e: 4 } },
    ],
    ['replaces lists whole', { l: [1, 2] }, { l: [3] }, { l: [3] }],
    ['replaces a non-object target', { a: 'x' }, { a: { b: 1 } }, { a: { b: 1 } }],
  ])('merge patch %s', (_name, target, patch, expected) => {
    expect(mergePatch(target, patch)).toEqual(expected);
  });

  it.each([
    [
      'merges conditions by type',
      {
        status: {
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'PodScheduled', status: 'True' },
          ],
        },
      },
      {
        status: {
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'DisruptionTarget', status: 'True' },
          ],
        },
      },
      {
        status: {
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'PodScheduled', status: 'True' },
            { type: 'DisruptionTarget', status: 'True' },
          ],
        },
      },
    ],
    [
      'deletes a list element with $patch: delete',
      {
        spec: {
          taints: [
            { key: 'a', effect: 'NoSchedule' },
            { key: 'b', effect: 'NoSchedule' },
          ],
        },
      },
      { spec: { taints: [{ key: 'a', $patch: 'delete' }] } },
      { spec: { taints: [{ key: 'b', effect: 'NoSchedule' }] } },
    ],
    [
      'merges finalizers as a set',
      { metadata: { finalizers: ['a'] } },
      { metadata: { finalizers: ['a', 'b'] } },
      { metadata: { finalizers: ['a', 'b'] } },
    ],
    [
      'removes finalizers with $deleteFromPrimitiveList',
      { metadata: { finalizers: ['a', 'b'] } },
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } },
      { metadata: { finalizers: ['b'] } },
    ],
    [
      'merges containers by name and env by name',
      { spec: { containers: [{ name: 'runner', env: [{ name: 'A', value: '1' }] }] } },
      { spec: { containers: [{ name: 'runner', env: [{ name: 'B', value: '2' }] }] } },
      {
        spec: {
          containers: [
            {
              name: 'runner',
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
            },
          ],
        },
      },
    ],
    [
      'replaces a map with $patch: replace',
      { metadata: { labels: { a: '1', b: '2' } } },
      { metadata: { labels: { $patch: 'replace', c: '3' } } },
      { metadata: { labels: { c: '3' } } },
    ],
    [
      'replaces lists without a merge key',
      { spec: { tolerations: [{ key: 'a' }] } },
      { spec: { tolerations: [{ key: 'b' }] } },
      { spec: { tolerations: [{ key: 'b' }] } },
    ],
  ])('strategic merge patch %s', (_name, target, patch, expected) => {
    expect(strategicMergePatch(target, patch)).toEqual(expected);
  });

  it('refuses a strategic list element without its merge key', () => {
    expect(() =>
      strategicMergePatch(
        { status: { conditions: [] } },
        { status: { conditions: [{ status: 'True' }] } },
      ),
    ).toThrow(PatchError);
  });

  it('applies JSON patch operations in order, atomically on the copy', () => {
    const doc = { metadata: { finalizers: ['x', 'y'], labels: { 'a/b': '1' } } };
    const out = jsonPatch(doc, [
      { op: 'test', path: '/metadata/finalizers/0', value: 'x' },
      { op: 'remove', path: '/metadata/finalizers/0' },
      { op: 'add', path: '/metadata/finalizers/-', value: 'z' },
      { op: 'replace', path: '/metadata/labels/a~1b', value: '2' },
      { op: 'copy', from: '/metadata/labels', path: '/metadata/annotations' },
      { op: 'move', from: '/metadata/annotations/a~1b', path: '/metadata/annotations/c' },
    ]);
    expect(out).toEqual({
      metadata: { finalizers: ['y', 'z'], labels: { 'a/b': '2' }, annotations: { c: '2' } },
    });
    expect(doc.metadata.finalizers).toEqual(['x', 'y']);
  });

  it.each([
    [[{ op: 'test', path: '/a', value: 2 }], 422],
    [[{ op: 'remove', path: '/missing' }], 422],
    [[{ op: 'replace', path: '/a/b/c', value: 1 }], 422],
    [[{ op: 'frobnicate', path: '/a' }], 400],
    [[{ path: '/a' }], 400],
    [{ op: 'add' }, 400],
  ])('rejects %j with %i', (patch, code) => {
    try {
      jsonPatch({ a: 1 }, patch);
      throw new Error('expected a PatchError');
    } catch (e) {
      expect(e).toBeInstanceOf(PatchError);
      expect((e as PatchError).code).toBe(code);
    }
  });
});
