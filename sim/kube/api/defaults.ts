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

/**
 * A Secret's `stringData` is write-only: on every write its keys are merged into `data`, base64
 * encoded, over any value there, and it is never stored nor read back (k8s.io/api/core/v1
 * types.go, Secret.StringData; pkg/apis/core/v1/conversion.go Convert_v1_Secret_To_core_Secret).
 * So `kubectl apply` of a Secret written with stringData reports it `configured` each time: the
 * live object never holds the stringData its last-applied configuration has (kubernetes#87736).
 */
export function foldSecretStringData(plural: string, obj: KubeObject): void {
  if (plural !== 'secrets' || obj.stringData === undefined) return;
  const strings = (obj.stringData ?? {}) as Record<string, string>;
  const data = { ...((obj.data ?? {}) as Record<string, string>) };
  for (const [key, value] of Object.entries(strings))
    data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  obj.data = data;
  delete obj.stringData;
}
