/**
 * The Helm values in infra/kubernetes/runner render into runner pods ARC accepts: the YAML parses,
 * and the pod template (the values' `template:`), placed in an EphemeralRunner as ARC does,
 * validates against ARC's EphemeralRunner CRD schema (vendored in sim/kube/crds) without a field
 * the API server would silently prune. The files also agree with each other and pass the doctor's
 * own pod-template checks.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import { loadCrd } from '../../sim/kube/api/crd-schemas.js';
import {
  checkRunnerPodTemplate,
  runnerPodTemplateOf,
} from '../../functions/doctor/pod-template-checks.js';

type Json = Record<string, unknown>;
const DIR = 'infra/kubernetes/runner';

function readYaml(name: string): Json {
  return parse(readFileSync(resolve(DIR, name), 'utf8')) as Json;
}

/** Helm's merge of several -f files: maps merge key by key, anything else (lists too) is replaced. */
function helmMerge(base: unknown, overlay: unknown): unknown {
  const isMap = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isMap(base) || !isMap(overlay)) return overlay;
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(overlay)) out[k] = helmMerge(base[k], v);
  return out;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const crd = loadCrd('ephemeralrunners');
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat('int32', {
  type: 'number',
  validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
});
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
const validate = ajv.compile(crd.schema);

/** Paths of fields the schema does not declare: a structural schema's API server drops them. */
function undeclaredFields(value: unknown, schema: Json | undefined, path = ''): string[] {
  if (!schema || value === null || typeof value !== 'object') return [];
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return [];
  if (Array.isArray(value)) {
    return value.flatMap((v, i) => undeclaredFields(v, schema.items as Json, `${path}[${i}]`));
  }
  const props = schema.properties as Record<string, Json> | undefined;
  const additional = schema.additionalProperties as Json | boolean | undefined;
  return Object.entries(value as Json).flatMap(([k, v]) => {
    const at = path ? `${path}.${k}` : k;
    if (props?.[k]) return undeclaredFields(v, props[k], at);
    if (additional && typeof additional === 'object') return undeclaredFields(v, additional, at);
    return props ? [at] : [];
  });
}

/** An EphemeralRunner carrying the values' pod template, as ARC builds one per runner. */
function ephemeralRunnerWith(template: Json): Json {
  return {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunner',
    metadata: { name: 'arc-runner-set-abcde-runner-x7k2p', namespace: 'arc-runners' },
    spec: {
      githubConfigUrl: 'https://github.com/your-org',
      githubConfigSecret: 'arc-github-app',
      runnerScaleSetId: 1,
      metadata: template.metadata,
      spec: template.spec,
    },
  };
}

const main = readYaml('values-karpenter.yaml');
const before129 = helmMerge(main, readYaml('values-karpenter-before-1.29.yaml')) as Json;
const nodePool = readYaml('nodepool-karpenter.yaml');

const podSpec = (values: Json) => (values.template as Json).spec as Json;
const container = (values: Json, name: string, list = 'containers') =>
  (podSpec(values)[list] as Json[]).find((c) => c.name === name) as Json;
const envOf = (c: Json, name: string) =>
  (c.env as Json[]).find((e) => e.name === name)?.value as string | undefined;

describe.each([
  ['values-karpenter.yaml', main, { major: 1, minor: 29 }],
  ['values-karpenter.yaml + values-karpenter-before-1.29.yaml', before129, { major: 1, minor: 28 }],
])('%s', (_name, values, kubernetesVersion) => {
  const template = values.template as Json;

  it('validates against the EphemeralRunner CRD schema', () => {
    const ok = validate(ephemeralRunnerWith(template));

    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('has no field the API server would prune', () => {
    const spec = (crd.schema.properties as Record<string, Json>).spec;

    expect(undeclaredFields(ephemeralRunnerWith(template).spec, spec)).toEqual([]);
  });

  it("passes every one of the doctor's pod-template checks", () => {
    const parsed = runnerPodTemplateOf(template);
    expect(parsed).toBeDefined();

    const results = checkRunnerPodTemplate(parsed as NonNullable<typeof parsed>, {
      kubernetesVersion,
    });

    expect(results.filter((r) => r.status !== 'ok')).toEqual([]);
    expect(results.map((r) => r.id)).toEqual([
      'graceful-stop',
      'termination-grace-period',
      'dind-sidecar',
      'karpenter-do-not-disrupt',
    ]);
  });

  it('runs the mounted entrypoint from the ConfigMap volume, wrapping run.sh', () => {
    const runner = container(values, 'runner');
    const mount = (runner.volumeMounts as Json[]).find((m) => m.name === 'graceful-stop') as Json;
    const volume = (podSpec(values).volumes as Json[]).find((v) => v.name === 'graceful-stop');

    expect(runner.command).toEqual([`${mount.mountPath as string}/graceful-stop.sh`]);
    expect(envOf(runner, 'RUNNER_ENTRYPOINT')).toBe('/home/runner/run.sh');
    expect(volume).toEqual({
      name: 'graceful-stop',
      configMap: { name: 'runner-graceful-stop', defaultMode: 0o555 },
    });
  });
});

describe('the schema check itself', () => {
  it('rejects a pod template with a wrongly typed field', () => {
    const broken = structuredClone(main.template as Json);
    (broken.spec as Json).terminationGracePeriodSeconds = '1860';

    expect(validate(ephemeralRunnerWith(broken))).toBe(false);
    expect(validate.errors?.map((e) => e.instancePath)).toContain(
      '/spec/spec/terminationGracePeriodSeconds',
    );
  });

  it('finds a misspelt field the API server would silently drop', () => {
    const misspelt = structuredClone(main.template as Json);
    const dind = ((misspelt.spec as Json).initContainers as Json[])[1] as Json;
    dind.restartPolicyy = dind.restartPolicy;
    delete dind.restartPolicy;
    const spec = (crd.schema.properties as Record<string, Json>).spec;

    expect(validate(ephemeralRunnerWith(misspelt))).toBe(true);
    expect(undeclaredFields(ephemeralRunnerWith(misspelt).spec, spec)).toEqual([
      'spec.initContainers[1].restartPolicyy',
    ]);
  });
});

describe('the runner files agree with each other', () => {
  it('the grace period covers the stop timeout with a margin, within the NodePool limit', () => {
    const grace = podSpec(main).terminationGracePeriodSeconds as number;
    const timeout = Number(envOf(container(main, 'runner'), 'RUNNER_GRACEFUL_STOP_TIMEOUT'));
    const nodePoolLimit = ((nodePool.spec as Json).template as Json).spec as Json;

    expect(grace - timeout).toBeGreaterThanOrEqual(30);
    expect(nodePoolLimit.terminationGracePeriod).toBe('2h');
    expect(grace).toBeLessThan(2 * 3600);
  });

  it('the runners select the NodePool and tolerate its taint', () => {
    const nodePoolSpec = ((nodePool.spec as Json).template as Json).spec as Json;

    expect(nodePool.kind).toBe('NodePool');
    expect(podSpec(main).nodeSelector).toEqual({
      'karpenter.sh/nodepool': (nodePool.metadata as Json).name,
    });
    expect(nodePoolSpec.taints).toEqual([{ key: 'gha-runners', effect: 'NoSchedule' }]);
    expect(podSpec(main).tolerations).toEqual([
      { key: 'gha-runners', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  it('before 1.29, dind waits for the very file graceful-stop.sh keeps while the runner runs', () => {
    const alive = envOf(container(before129, 'runner'), 'RUNNER_ALIVE_FILE') as string;
    const dind = container(before129, 'dind');
    const preStop = ((dind.lifecycle as Json).preStop as Json).exec as Json;
    const sharedMount = (c: Json) =>
      (c.volumeMounts as Json[]).find((m) => m.name === 'dind-sock')?.mountPath;

    expect(alive.startsWith(`${sharedMount(container(before129, 'runner')) as string}/`)).toBe(
      true,
    );
    expect(sharedMount(dind)).toBe(sharedMount(container(before129, 'runner')));
    expect((preStop.command as string[]).join(' ')).toContain(`[ -e ${alive} ]`);
    expect(podSpec(before129).initContainers as Json[]).toHaveLength(1);
  });
});
