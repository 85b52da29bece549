import * as root from '@kubernetes/client-node';
import * as lean from '../../../functions/adapters/kubernetes/client-node.js';

describe("the adapters' deep imports of @kubernetes/client-node", () => {
  it.each(Object.keys(lean))('%s is the package root’s own export', (name) => {
    expect(lean[name as keyof typeof lean]).toBe(root[name as keyof typeof root]);
  });

  it('covers what the adapters use', () => {
    expect(Object.keys(lean).sort()).toEqual([
      'ApiException',
      'CoreV1Api',
      'CustomObjectsApi',
      'KubeConfig',
      'Observable',
      'PatchStrategy',
      'setHeaderOptions',
    ]);
  });
});
