/**
 * `runner-medic serve --sandbox`: a scenario played through serve's in-cluster runtime rather
 * than the Lambda harness: its informers and its Lease on the Kubernetes twin, GitHub's webhooks
 * from the GitHub twin to its webhook port, SQLite in a temporary folder, its timers on the
 * scenario's clock. After every instant at which timers ran (and every quiet simulated second) the
 * clock waits until each replica has nothing queued and its informers hold what the API server
 * lists (ServeRuntime.settled): what the watches carry is decided at the simulated instant it
 * happened, before the next timer of any model (the Lambda harness's bus delivers an exported
 * event 0.5 s later).
 *
 * The twin cannot mint a ServiceAccount token, so the in-cluster Roles
 * (infra/kubernetes/in-cluster/rbac-*.yaml) are applied as written but bound to the group the
 * twin's runner-medic actor is in, in each of the scenario's runner namespaces: the informers,
 * the Lease and the engine run with exactly those grants.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { parseAllDocuments } from 'yaml';
import type { Action } from '../functions/domain/model/action.js';
import { loopbackClients } from './local/loopback-clients.js';
import type { SimClock } from '../sim/clock.js';
import { formatOutcome } from './scenario/format-outcome.js';
import { createKubeClusterTwin, type KubeClusterTwin } from './scenario/kube-cluster-twin.js';
import type { MedicHarnessOptions, RemediationRecord } from './scenario/medic-harness.js';
import { isLeaderElectionWrite, type ScenarioOutcome } from './scenario/outcome.js';
import { runScenario, type ScenarioMedic } from './scenario/run-scenario.js';
import { describeRemediation } from './scenario/sandbox.js';
import { loadScenario } from './scenario/scenario-schema.js';
import { KubeHttpError, kubeRequester, type KubeRequest } from '../functions/serve/kube-http.js';
import { ServeRuntime } from '../functions/serve/serve-runtime.js';
import type { Timers } from '../functions/serve/timers.js';

const WEBHOOK_SECRET = 'serve-sandbox-webhook-secret';
const IN_CLUSTER_RBAC = [
  'infra/kubernetes/in-cluster/rbac-lease.yaml',
  'infra/kubernetes/in-cluster/rbac-runner-namespace.yaml',
  'infra/kubernetes/in-cluster/rbac-cluster.yaml',
];
/** The namespace the manifests write for the runners; the scenario's replace it. */
const MANIFEST_RUNNER_NAMESPACE = 'arc-runners';
const SERVE_NAMESPACE = 'runner-medic';
/** The user the twin's runner-medic kubeconfig authenticates as. */
const TWIN_IDENTITY = 'runner-medic';
const STEP_MS = 1000;

export interface ServeSandboxOptions {
  file: string;
  /** Simulated seconds per real second; null: as fast as it goes. */
  speed: number | null;
  write: (text: string) => void;
  /** serve replicas against the one twin. @default 1 */
  replicas?: number;
  /** The replica GitHub's webhooks are sent to. @default 0 */
  webhookReplica?: number;
  /** Extra environment for every replica (LEASE_DURATION_SECONDS, …). */
  env?: Record<string, string>;
  /** Called between a replica's action and its audit event (the leader test kills it there). */
  afterAct?: (replica: ServeRuntime, action: Action) => void | Promise<void>;
  /** Called after each step of the clock (an instant with timers, or a quiet second), once settled. */
  onStep?: (replicas: ServeRuntime[], clock: SimClock) => void | Promise<void>;
  /** The SQLite folder, kept after the play. @default a temporary folder, removed after */
  dir?: string;
  /** Audit events and log lines of the replicas. @default dropped */
  sink?: (line: string) => void;
}

export interface ServeSandboxResult {
  outcome: ScenarioOutcome;
  recovered: boolean;
  replicas: ServeRuntime[];
}

/** Plays one scenario through serve; narrates it with `write` and judges it as the harness's. */
export async function playServeSandbox(options: ServeSandboxOptions): Promise<ServeSandboxResult> {
  const scenario = await loadScenario(options.file);
  if (scenario.clusters.length !== 1)
    throw new Error(`serve runs in one cluster; ${scenario.name} has ${scenario.clusters.length}`);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'runner-medic-serve-'));
  options.write(
    `sandbox: playing ${scenario.name} through runner-medic serve: informers and the Lease on the Kubernetes twin, ` +
      `webhooks from the GitHub twin, SQLite in ${dir}\n`,
  );
  const twins: KubeClusterTwin[] = [];
  let medic: ServeMedic | undefined;
  try {
    const outcome = await runScenario(scenario, {
      remediation: true,
      createCluster: async (input) => {
        const twin = await createKubeClusterTwin(input);
        twins.push(twin);
        return twin;
      },
      createMedic: (harness) => {
        medic = new ServeMedic(
          harness,
          twins,
          dir,
          options,
          scenario.clusters[0]?.rbac.manifests ?? [],
        );
        return medic;
      },
      onTimeline: (line) => options.write(`${line}\n`),
      describeRemediation,
      drive: (clock, end) => drive(clock, end, options, () => medic),
    });
    options.write(`${formatOutcome(outcome)}\n`);
    options.write(
      outcome.passed
        ? 'runner-medic serve recovered every job the scenario expects.\n'
        : 'runner-medic serve did NOT meet the scenario: see the failed expectations above.\n',
    );
    return { outcome, recovered: outcome.passed, replicas: medic?.replicas ?? [] };
  } finally {
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  }
}

async function drive(
  clock: SimClock,
  end: number,
  options: ServeSandboxOptions,
  medic: () => ServeMedic | undefined,
): Promise<void> {
  const simStart = clock.now();
  const wallStart = performance.now();
  while (clock.now() < end) {
    // One instant at a time: serve reacts to what a timer changed before any later timer runs.
    // Moved a second at once, a change made while a timer awaited the API server (a Lease
    // renewal) reached serve's informers at once or only after the later timers of that second
    // (ARC's own reaction 0.2 s on), as the machine's scheduling had it.
    const next = clock.nextTimerAt() ?? Number.POSITIVE_INFINITY;
    await clock.advanceTo(Math.min(end, clock.now() + STEP_MS, Math.max(next, clock.now())));
    const m = medic();
    if (m) {
      await m.settled();
      await options.onStep?.(m.replicas, clock);
    }
    if (options.speed !== null) {
      const wait = wallStart + (clock.now() - simStart) / options.speed - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** The scenario's runner-medic: serve replicas on the twins, in place of the Lambda harness. */
class ServeMedic implements ScenarioMedic {
  readonly remediations: RemediationRecord[] = [];
  readonly errors: string[] = [];
  readonly replicas: ServeRuntime[] = [];
  /** The cluster's resourceVersion when the informers were last checked, and the audit read then. */
  private checkedRv: number | null = null;
  private auditSeen = 0;

  constructor(
    private readonly harness: MedicHarnessOptions,
    private readonly twins: KubeClusterTwin[],
    private readonly dir: string,
    private readonly options: ServeSandboxOptions,
    /** The scenario's Lambda grants, which serve's replace. */
    private readonly lambdaGrants: readonly string[],
  ) {}

  async start(): Promise<void> {
    const { clock, github } = this.harness;
    const twin = this.twins[0];
    if (!twin) throw new Error('no cluster twin');
    const namespaces = this.harness.namespaces?.[twin.name] ?? [];
    const admin = kubeRequester(kubeConfigOf(twin.kubeconfig('admin')));
    await grantInCluster(admin, this.lambdaGrants, namespaces);
    const kubeconfig = this.harness.kubeconfigs[twin.name] ?? '';
    const timers: Timers = {
      after: (ms, label, run) => {
        const handle = clock.after(ms, label, run);
        return () => clock.cancel(handle);
      },
    };
    const count = this.options.replicas ?? 1;
    for (let i = 0; i < count; i++) {
      const replica: ServeRuntime = new ServeRuntime({
        env: {
          CLUSTER_NAME: twin.name,
          RUNNER_NAMESPACES: namespaces.join(','),
          STORE: 'sqlite',
          SQLITE_PATH: join(this.dir, 'runner-medic.db'),
          HOST: '127.0.0.1',
          PORT: '0',
          PROBE_PORT: '0',
          POD_NAME: `runner-medic-${i}`,
          POD_NAMESPACE: SERVE_NAMESPACE,
          SWEEP_SECONDS: String(this.harness.sweepSeconds),
          GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
          GITHUB_API_URL: github.baseUrl,
          GITHUB_APP_CREDENTIALS: JSON.stringify({
            appId: github.app.appId,
            privateKey: github.app.privateKey,
          }),
          ...this.options.env,
        },
        clock,
        timers,
        kubeconfig: kubeConfigOf(kubeconfig),
        out: { write: (line: string) => this.options.sink?.(line) },
        clients: loopbackClients(clock),
        policy: async () => this.harness.policy,
        onAudit: (detail) => {
          const record = { at: clock.now(), detail };
          this.remediations.push(record);
          this.harness.onRemediation?.(record);
        },
        onEngineError: (work, error) =>
          this.errors.push(
            `${replica.identity} ${work} at ${clock.now()}: ${(error as Error).message}`,
          ),
        ...(this.options.afterAct
          ? { afterAct: (action: Action) => this.options.afterAct?.(replica, action) }
          : {}),
        reconnectDelay: async () => undefined,
      });
      const { webhookUrl } = await replica.start();
      this.replicas.push(replica);
      if (i === (this.options.webhookReplica ?? 0))
        github.setWebhookTarget({ url: `${webhookUrl}/webhook`, secret: WEBHOOK_SECRET });
    }
  }

  /** Exported events are not used: serve watches the cluster itself. */
  putClusterEvent(): void {}

  /**
   * Waits until every replica has nothing queued and its informers hold what the API server lists.
   * Listing every informer's collection after each simulated second is most of a play's cost, so
   * it is skipped when the cluster's resourceVersion moved only by the Lease's renewals since the
   * last time the informers were found caught up (the twin's resourceVersions count its writes
   * one by one): then no change is on its way to them.
   */
  async settled(): Promise<void> {
    const twin = this.twins[0];
    const live = this.replicas.filter((r) => !r.status().draining);
    if (!twin) return;
    const rv = twin.resourceVersion();
    const audit = twin.audit();
    const leaseWrites = audit
      .slice(this.auditSeen)
      .filter((e) => isLeaderElectionWrite(e) && e.code >= 200 && e.code < 300).length;
    const onlyLeases = this.checkedRv !== null && rv - this.checkedRv === leaseWrites;
    this.checkedRv = rv;
    this.auditSeen = audit.length;
    for (const replica of live) await replica.settled({ informers: !onlyLeases });
  }

  async stop(): Promise<void> {
    this.harness.github.setWebhookTarget(undefined);
    for (const replica of this.replicas) await replica.drain();
  }
}

function kubeConfigOf(text: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(text);
  return kc;
}

/**
 * Gives the twin's runner-medic identity exactly the in-cluster grants: the scenario's Lambda
 * grants (its `rbac.manifests`) are deleted, then the in-cluster Roles and bindings are applied as
 * `kubectl apply` would (created, or replaced when one of that name exists: the runner
 * namespace's Role has the Lambda Role's name), each runner-namespace document once per runner
 * namespace. The twin cannot mint a ServiceAccount token, so the bindings' subject, the
 * ServiceAccount runner-medic/runner-medic, is the twin's runner-medic user instead; the rules are
 * the manifests' own.
 */
async function grantInCluster(
  admin: KubeRequest,
  lambdaGrants: readonly string[],
  runnerNamespaces: string[],
): Promise<void> {
  await apply(admin, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: SERVE_NAMESPACE },
  });
  for (const file of lambdaGrants)
    for (const object of manifestObjects(file, runnerNamespaces)) await remove(admin, object);
  for (const file of IN_CLUSTER_RBAC)
    for (const object of manifestObjects(file, runnerNamespaces)) {
      if (object.subjects)
        object.subjects = object.subjects.map((subject) =>
          subject.kind === 'ServiceAccount' &&
          subject.name === SERVE_NAMESPACE &&
          subject.namespace === SERVE_NAMESPACE
            ? { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: TWIN_IDENTITY }
            : subject,
        );
      await apply(admin, object);
    }
}

interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/** A manifest's documents; a runner-namespace one (or one without a namespace) in each runner namespace. */
function manifestObjects(file: string, runnerNamespaces: string[]): ManifestObject[] {
  const out: ManifestObject[] = [];
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const object = doc.toJS() as ManifestObject | null;
    if (!object) continue;
    const clusterScoped = object.kind.startsWith('Cluster') || object.kind === 'Namespace';
    const ns = object.metadata.namespace;
    const targets = clusterScoped
      ? [undefined]
      : ns === undefined || ns === MANIFEST_RUNNER_NAMESPACE
        ? runnerNamespaces
        : [ns];
    for (const target of targets) {
      const metadata = { ...object.metadata };
      delete metadata.namespace;
      out.push({ ...object, metadata: target ? { ...metadata, namespace: target } : metadata });
    }
  }
  return out;
}

function pathOf(object: ManifestObject): string {
  const plural = `${object.kind.toLowerCase()}s`;
  const ns = object.metadata.namespace;
  if (object.kind === 'Namespace') return '/api/v1/namespaces';
  return ns
    ? `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/${plural}`
    : `/apis/rbac.authorization.k8s.io/v1/${plural}`;
}

/** `kubectl apply`: created, or replaced when it exists. */
async function apply(admin: KubeRequest, object: ManifestObject): Promise<void> {
  try {
    await admin('POST', pathOf(object), object);
  } catch (error) {
    if (!(error instanceof KubeHttpError && error.statusCode === 409)) throw error;
    if (object.kind === 'Namespace') return;
    const path = `${pathOf(object)}/${object.metadata.name}`;
    const current = (await admin('GET', path)) as { metadata?: { resourceVersion?: string } };
    await admin('PUT', path, {
      ...object,
      metadata: { ...object.metadata, resourceVersion: current.metadata?.resourceVersion },
    });
  }
}

async function remove(admin: KubeRequest, object: ManifestObject): Promise<void> {
  try {
    await admin('DELETE', `${pathOf(object)}/${object.metadata.name}`);
  } catch (error) {
    if (!(error instanceof KubeHttpError && error.statusCode === 404)) throw error;
  }
}
