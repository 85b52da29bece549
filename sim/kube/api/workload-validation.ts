/**
 * The API server's own validation of the kinds runner-medic serve's manifests create
 * (infra/kubernetes/in-cluster/), as far as a hand-written manifest can trip over it, so that
 * "every object is accepted" by the twin means what it means on a real cluster:
 * - Deployment: k8s.io/kubernetes pkg/apis/apps/validation/validation.go ValidateDeploymentSpec (a
 *   selector that is required, not empty, and matches the template's labels) and, for its pod
 *   template, pkg/apis/core/validation/validation.go (containers with a name and an image, port
 *   names that are IANA service names, unique per container, container ports in 1-65535, volumes
 *   with exactly one source, volume mounts that name a volume and have a path);
 * - Service: ValidateService (ports required unless headless, in 1-65535, named target ports that
 *   are IANA service names);
 * - PersistentVolumeClaim: ValidatePersistentVolumeClaimSpec (an access mode and a storage
 *   request);
 * - PodDisruptionBudget: pkg/apis/policy/validation ValidatePodDisruptionBudgetSpec (not both
 *   minAvailable and maxUnavailable).
 * Pods keep the lighter checks of validation.ts: the models create them, and the twin does not
 * validate what they write.
 */
import type { StatusCause } from './errors.js';
import type { ResourceDef } from './resources.js';
import type { KubeObject } from '../types.js';

type Json = Record<string, unknown>;

/** Volume sources in the order validateVolumeSource looks at them: the second found is refused. */
const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'secret',
  'nfs',
  'persistentVolumeClaim',
  'downwardAPI',
  'configMap',
  'projected',
  'csi',
  'ephemeral',
  'image',
];

const required = (field: string, detail?: string): StatusCause => ({
  reason: 'FieldValueRequired',
  field,
  message: detail ? `Required value: ${detail}` : 'Required value',
});

const invalid = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
});

/** IsValidPortName (k8s.io/apimachinery/pkg/util/validation): an IANA service name. */
function portNameProblem(name: string): string | undefined {
  if (name.length > 15) return 'must be no more than 15 characters';
  if (!/^[-a-z0-9]+$/.test(name))
    return 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)';
  if (name.includes('--')) return 'must not contain consecutive hyphens';
  if (!/[a-z]/.test(name)) return 'must contain at least one letter (a-z)';
  if (name.startsWith('-') || name.endsWith('-')) return 'must not begin or end with a hyphen';
  return undefined;
}

function portNumberCauses(field: string, value: unknown): StatusCause[] {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535
    ? []
    : [invalid(field, value, 'must be between 1 and 65535, inclusive')];
}

function validatePodTemplate(template: Json | undefined, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = (template?.spec ?? {}) as Json;
  const volumes = (Array.isArray(spec.volumes) ? spec.volumes : []) as Json[];
  const volumeNames = new Set<string>();
  volumes.forEach((v, i) => {
    const field = `${at}.spec.volumes[${i}]`;
    const name = typeof v.name === 'string' ? v.name : '';
    if (!name) causes.push(required(`${field}.name`));
    else if (volumeNames.has(name))
      causes.push({
        reason: 'FieldValueDuplicate',
        field: `${field}.name`,
        message: `Duplicate value: "${name}"`,
      });
    volumeNames.add(name);
    const sources = VOLUME_SOURCES.filter((s) => v[s] !== undefined);
    if (sources.length === 0) causes.push(required(field, 'must specify a volume type'));
    if (sources.length > 1)
      causes.push({
        reason: 'FieldValueForbidden',
        field: `${field}.${sources[1]}`,
        message: 'Forbidden: may not specify more than 1 volume type',
      });
  });
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0)
    return [...causes, required(`${at}.spec.containers`)];
  (containers as Json[]).forEach((c, i) => {
    const field = `${at}.spec.containers[${i}]`;
    if (!c.name) causes.push(required(`${field}.name`));
    if (!c.image) causes.push(required(`${field}.image`));
    const portNames = new Set<string>();
    ((Array.isArray(c.ports) ? c.ports : []) as Json[]).forEach((p, j) => {
      causes.push(...portNumberCauses(`${field}.ports[${j}].containerPort`, p.containerPort));
      if (typeof p.name !== 'string' || p.name === '') return;
      const problem = portNameProblem(p.name);
      if (problem) causes.push(invalid(`${field}.ports[${j}].name`, p.name, problem));
      else if (portNames.has(p.name))
        causes.push({
          reason: 'FieldValueDuplicate',
          field: `${field}.ports[${j}].name`,
          message: `Duplicate value: "${p.name}"`,
        });
      portNames.add(p.name);
    });
    ((Array.isArray(c.volumeMounts) ? c.volumeMounts : []) as Json[]).forEach((m, j) => {
      const name = typeof m.name === 'string' ? m.name : '';
      if (!name) causes.push(required(`${field}.volumeMounts[${j}].name`));
      else if (!volumeNames.has(name))
        causes.push({
          reason: 'FieldValueNotFound',
          field: `${field}.volumeMounts[${j}].name`,
          message: `Not found: "${name}"`,
        });
      if (!m.mountPath) causes.push(required(`${field}.volumeMounts[${j}].mountPath`));
    });
  });
  return causes;
}

function validateDeployment(obj: KubeObject): StatusCause[] {
  const spec = (obj.spec ?? {}) as Json;
  const causes: StatusCause[] = [];
  const selector = spec.selector as
    { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | undefined;
  const template = spec.template as Json | undefined;
  const labels = ((template?.metadata as Json | undefined)?.labels ?? {}) as Record<string, string>;
  if (!selector) causes.push(required('spec.selector'));
  else {
    const matchLabels = selector.matchLabels ?? {};
    if (Object.keys(matchLabels).length === 0 && (selector.matchExpressions ?? []).length === 0)
      causes.push(invalid('spec.selector', selector, 'empty selector is invalid for deployment'));
    else if (Object.entries(matchLabels).some(([k, v]) => labels[k] !== v))
      causes.push(
        invalid(
          'spec.template.metadata.labels',
          labels,
          '`selector` does not match template `labels`',
        ),
      );
  }
  if (spec.replicas !== undefined && !(typeof spec.replicas === 'number' && spec.replicas >= 0))
    causes.push(invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  return [...causes, ...validatePodTemplate(template, 'spec.template')];
}

function validateService(obj: KubeObject): StatusCause[] {
  const spec = (obj.spec ?? {}) as Json;
  const ports = (Array.isArray(spec.ports) ? spec.ports : []) as Json[];
  if (ports.length === 0 && spec.clusterIP !== 'None' && spec.type !== 'ExternalName')
    return [required('spec.ports')];
  const causes: StatusCause[] = [];
  ports.forEach((p, i) => {
    causes.push(...portNumberCauses(`spec.ports[${i}].port`, p.port));
    if (ports.length > 1 && !p.name) causes.push(required(`spec.ports[${i}].name`));
    if (typeof p.targetPort === 'string') {
      const problem = portNameProblem(p.targetPort);
      if (problem) causes.push(invalid(`spec.ports[${i}].targetPort`, p.targetPort, problem));
    } else if (p.targetPort !== undefined)
      causes.push(...portNumberCauses(`spec.ports[${i}].targetPort`, p.targetPort));
  });
  return causes;
}

function validateClaim(obj: KubeObject): StatusCause[] {
  const spec = (obj.spec ?? {}) as Json;
  const causes: StatusCause[] = [];
  if (!Array.isArray(spec.accessModes) || spec.accessModes.length === 0)
    causes.push(required('spec.accessModes', 'at least 1 access mode is required'));
  const requests = ((spec.resources as Json | undefined)?.requests ?? {}) as Json;
  if (requests.storage === undefined) causes.push(required('spec.resources[storage]'));
  return causes;
}

function validateDisruptionBudget(obj: KubeObject): StatusCause[] {
  const spec = (obj.spec ?? {}) as Json;
  return spec.minAvailable !== undefined && spec.maxUnavailable !== undefined
    ? [invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set')]
    : [];
}

/** The causes a real API server would reject `obj` with, for the kinds above. */
export function validateWorkload(def: ResourceDef, obj: KubeObject): StatusCause[] {
  if (def.group === 'apps' && def.kind === 'Deployment') return validateDeployment(obj);
  if (def.group === '' && def.kind === 'Service') return validateService(obj);
  if (def.group === '' && def.kind === 'PersistentVolumeClaim') return validateClaim(obj);
  if (def.group === 'policy' && def.kind === 'PodDisruptionBudget')
    return validateDisruptionBudget(obj);
  return [];
}
