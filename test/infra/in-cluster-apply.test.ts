/**
 * `kubectl apply -k infra/kubernetes/in-cluster`, as docs/in-cluster.md tells users to run it:
 * the real kubectl (Debian package kubernetes-client; .ci/run installs it) against the
 * Kubernetes twin (sim/kube) over its HTTPS listener, as a cluster admin, with kubectl's defaults:
 * client-side apply (GET, then POST with the last-applied annotation, or a strategic merge PATCH),
 * and `--validate=strict`, which reads the twin's OpenAPI v3 and so sends `fieldValidation=Strict`
 * (a field a kind does not declare fails the request, as on a real API server).
 * - `kubectl kustomize` renders the manifests;
 * - every rendered object is created, and reads back (kubectl get -k) as it was written;
 * - a second apply changes nothing: every object `unchanged`, except the two that kubectl reports
 *   `configured` against any real cluster, whose patches the server finds empty;
 * - a misspelt field is refused: the test can fail.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { SimClock } from '../../sim/clock.js';
import { SimCluster } from '../../sim/kube/cluster.js';
import { kubectlPath } from '../sim/kube/helpers.js';

const MANIFESTS = resolve('infra/kubernetes/in-cluster');
const TIMEOUT = 120_000;

interface Rendered {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Twin {
  cluster: SimCluster;
  kubectl: (...args: string[]) => Promise<{ stdout: string; stderr: string }>;
  stop: () => Promise<void>;
}

function requireKubectl(): string {
  const path = kubectlPath();
  if (!path)
    throw new Error(
      'kubectl is not installed: install the Debian package kubernetes-client (.ci/run does)',
    );
  return path;
}

/** A twin with RBAC on, `default` and ARC's `arc-runners` namespace, and kubectl as its admin. */
async function startTwin(): Promise<Twin> {
  const kubectl = requireKubectl();
  const cluster = new SimCluster({ name: 'apply', clock: new SimClock(Date.now()), rbac: true });
  cluster.createNamespace('arc-runners');
  await cluster.start();
  const home = mkdtempSync(join(tmpdir(), 'in-cluster-apply-'));
  const kubeconfig = join(home, 'config');
  writeFileSync(kubeconfig, cluster.kubeconfig('admin'), { mode: 0o600 });
  return {
    cluster,
    // Asynchronous: the twin answers from this process, so a blocking exec would starve it.
    kubectl: (...args) =>
      promisify(execFile)(kubectl, ['--kubeconfig', kubeconfig, '--request-timeout=30s', ...args], {
        encoding: 'utf8',
        env: { ...process.env, HOME: home, KUBECACHEDIR: join(home, 'cache') },
      }),
    stop: async () => {
      await cluster.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** How kubectl names an object in its output: `deployment.apps/runner-medic`. */
function printed(o: Rendered): string {
  const group = o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : '';
  return `${o.kind.toLowerCase()}${group}/${o.metadata.name}`;
}

/** The twin's resource for a kind (every kind here forms its plural with an s). */
const resourceOf = (o: Rendered) => `${o.kind.toLowerCase()}s`;

/** What a written object reads back as: a Secret's write-only stringData lands in data. */
function asStored(o: Rendered): Rendered {
  if (o.kind !== 'Secret' || !o.stringData) return o;
  const { stringData, ...rest } = o;
  const data = Object.fromEntries(
    Object.entries(stringData as Record<string, string>).map(([k, v]) => [
      k,
      Buffer.from(v).toString('base64'),
    ]),
  );
  return { ...rest, data };
}

let rendered: Rendered[];

beforeAll(async () => {
  const { stdout } = await promisify(execFile)(requireKubectl(), ['kustomize', MANIFESTS], {
    encoding: 'utf8',
  });
  rendered = parseAllDocuments(stdout).map((d) => d.toJS() as Rendered);
}, TIMEOUT);

test('kubectl kustomize renders every kind the in-cluster deployment needs', () => {
  const kinds = new Set(rendered.map((o) => `${o.apiVersion} ${o.kind}`));
  for (const kind of [
    'v1 Namespace',
    'v1 ServiceAccount',
    'rbac.authorization.k8s.io/v1 Role',
    'rbac.authorization.k8s.io/v1 RoleBinding',
    'rbac.authorization.k8s.io/v1 ClusterRole',
    'rbac.authorization.k8s.io/v1 ClusterRoleBinding',
    'v1 Secret',
    'v1 PersistentVolumeClaim',
    'apps/v1 Deployment',
    'policy/v1 PodDisruptionBudget',
    'v1 Service',
  ])
    expect(kinds).toContain(kind);
  // kustomization.yaml's image entry and common labels were applied.
  const deployment = rendered.find((o) => o.kind === 'Deployment') as Rendered;
  expect(JSON.stringify(deployment)).toContain('"image":"runner-medic:0.1.0"');
  for (const o of rendered)
    expect(o.metadata.labels).toMatchObject({ 'app.kubernetes.io/component': 'serve' });
});

describe('kubectl apply -k against the twin', () => {
  let twin: Twin;
  beforeAll(async () => {
    twin = await startTwin();
  }, TIMEOUT);
  afterAll(() => twin.stop());

  test(
    'creates every object; they read back as written; a second apply changes nothing',
    async () => {
      const first = await twin.kubectl('apply', '-k', MANIFESTS);
      expect(first.stdout.trim().split('\n').sort()).toEqual(
        rendered.map((o) => `${printed(o)} created`).sort(),
      );
      // Written by the admin, created (201) once each, with kubectl's last-applied annotation.
      const creates = twin.cluster.audit.entries.filter(
        (e) => e.by === 'admin' && e.verb === 'create',
      );
      expect(creates).toHaveLength(rendered.length);
      expect(creates.every((e) => e.code === 201)).toBe(true);

      const { stdout } = await twin.kubectl('get', '-k', MANIFESTS, '-o', 'json');
      const live = (JSON.parse(stdout) as { items: Rendered[] }).items;
      expect(live.map(printed).sort()).toEqual(rendered.map(printed).sort());
      for (const o of rendered) {
        const read = live.find((l) => printed(l) === printed(o));
        const { annotations, ...meta } = (read as Rendered).metadata as Rendered['metadata'] & {
          annotations?: Record<string, string>;
        };
        expect({ ...read, metadata: meta }).toMatchObject(asStored(o));
        expect(
          JSON.parse(annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}'),
        ).toMatchObject({ kind: o.kind, metadata: { name: o.metadata.name } });
      }
      const versions = () =>
        rendered.map(
          (o) =>
            twin.cluster.api.get(resourceOf(o), o.metadata.namespace, o.metadata.name).metadata
              .resourceVersion,
        );
      const before = versions();

      const second = await twin.kubectl('apply', '-k', MANIFESTS);
      // kubectl reports these two `configured` against a real cluster too, and its patch changes
      // nothing there: a Secret's stringData is never stored, so the three-way diff always puts it
      // back (kubernetes/kubernetes#87736), and a PodDisruptionBudget's selector has the patch
      // strategy `replace` (k8s.io/api/policy/v1 types.go), so it is always sent whole.
      const configured = new Set([
        'secret/runner-medic',
        'poddisruptionbudget.policy/runner-medic',
      ]);
      expect(second.stdout.trim().split('\n').sort()).toEqual(
        rendered
          .map((o) => `${printed(o)} ${configured.has(printed(o)) ? 'configured' : 'unchanged'}`)
          .sort(),
      );
      expect(second.stderr).not.toMatch(/warning|error/i);
      expect(versions()).toEqual(before);
    },
    TIMEOUT,
  );
});

test(
  'a field the kind does not declare is refused, as fieldValidation=Strict refuses it',
  async () => {
    const twin = await startTwin();
    const overlay = mkdtempSync(join(tmpdir(), 'in-cluster-overlay-'));
    try {
      writeFileSync(
        join(overlay, 'kustomization.yaml'),
        [
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'resources:',
          `  - ${relative(overlay, MANIFESTS)}`,
          'patches:',
          '  - target: { kind: Deployment, name: runner-medic }',
          '    patch: |-',
          '      - op: add',
          '        path: /spec/template/spec/containers/0/securityContext/readOnlyRootFileSystem',
          '        value: true',
          '',
        ].join('\n'),
      );
      const failed = await twin.kubectl('apply', '-k', overlay).then(
        () => undefined,
        (error: { code?: number; stdout: string; stderr: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain(
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ' +
          'unknown field "spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem"',
      );
      // Everything else was accepted; the Deployment was not created.
      expect(failed?.stdout).toContain('poddisruptionbudget.policy/runner-medic created');
      expect(
        twin.cluster.api.tryGet('deployments', 'runner-medic', 'runner-medic'),
      ).toBeUndefined();
    } finally {
      rmSync(overlay, { recursive: true, force: true });
      await twin.stop();
    }
  },
  TIMEOUT,
);
