/** Server-side defaults and status resets applied on create, as the real API server does. */
import type { KubeObject, Pod } from '../types.js';

export function applyCreateDefaults(plural: string, obj: KubeObject): void {
  if (plural === 'pods') {
    const pod = obj as Pod;
    const spec = pod.spec;
    spec.restartPolicy ??= 'Always';
    spec.terminationGracePeriodSeconds ??= 30;
    spec.dnsPolicy ??= 'ClusterFirst';
    spec.schedulerName ??= 'default-scheduler';
    spec.securityContext ??= {};
    spec.serviceAccountName ??= 'default';
    spec.enableServiceLinks ??= true;
    spec.preemptionPolicy ??= 'PreemptLowerPriority';
    spec.priority ??= 0;
    // DefaultTolerationSeconds admission plugin (seen in the seed's `kubectl describe pod`).
    const tolerations = (spec.tolerations ??= []);
    for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
      if (!tolerations.some((t) => t.key === key)) {
        tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
      }
    }
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      c.imagePullPolicy ??=
        typeof c.image === 'string' && c.image.endsWith(':latest') ? 'Always' : 'IfNotPresent';
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      c.resources ??= {};
    }
  }
}

/** The status a freshly created object starts with (clients cannot set it on create). */
export function initialStatus(plural: string, obj: KubeObject): unknown {
  switch (plural) {
    case 'pods': {
      const spec = (obj as Pod).spec;
      const hasResources = spec.containers.some(
        (c) => c.resources && Object.keys(c.resources as object).length > 0,
      );
      return { phase: 'Pending', qosClass: hasResources ? 'Burstable' : 'BestEffort' };
    }
    case 'namespaces':
      return { phase: 'Active' };
    default:
      return undefined;
  }
}
