import { DynamoFactsStore } from '../../../functions/adapters/store/dynamo-facts-store.js';
import { createDocumentClient } from '../../../functions/config/compose-clients.js';
import { composeEngine } from '../../../functions/config/compose-engine.js';
import { loadSettings } from '../../../functions/config/settings.js';
import { DEFAULT_POLICY, mergeDeep } from '../../../functions/domain/policy/policy.js';
import type { Policy } from '../../../functions/domain/policy/policy.js';
import type { EngineDeps } from '../../../functions/engine/engine-deps.js';
import { startEmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
import type { EmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
import { loopbackClients } from '../../../sandbox/local/loopback-clients.js';
import { EventBridgeSim } from '../../../sim/aws/eventbridge-sim.js';
import { SimClock } from '../../../sim/clock.js';
import { Rng } from '../../../sim/rng.js';
import { GitHubSim } from '../../../sim/github/github-sim.js';
import { ApiServer } from '../../../sim/kube/api/api-server.js';

export const CLUSTER = 'prod-eu';

/**
 * The engine as the functions compose it (config/compose-engine.ts), against the Kubernetes and GitHub
 * twins, dynalite and a loopback bus; check runs off, and without the webhook ledger and the
 * cluster sightings, which these tests do not look at (test/operate adds check runs back).
 */
export class EngineHarness {
  readonly clock = new SimClock(Date.parse('2026-03-02T09:00:00Z'));
  readonly kube = new ApiServer({
    clock: this.clock,
    rng: new Rng(5),
    clusterName: CLUSTER,
    schemaFlavour: '0.13',
  });
  readonly github = new GitHubSim({ clock: this.clock, seed: 5 });
  readonly bus = new EventBridgeSim();
  readonly logs: { level: string; message: string; fields?: object }[] = [];
  readonly metrics: { name: string; dimensions: Record<string, string>; value: number }[] = [];
  policy: Policy = DEFAULT_POLICY;
  private dynamo: EmbeddedDynamo | undefined;
  private deps: EngineDeps | undefined;
  private facts: DynamoFactsStore | undefined;
  private busUrl = '';

  /** What a child process needs to run the same engine against the same twins and store. */
  endpoints() {
    if (!this.dynamo) throw new Error('harness not started');
    return {
      dynamo: this.dynamo.endpoint,
      table: this.dynamo.tableName,
      bus: this.busUrl,
      kubeconfig: this.kube.kubeconfig('runner-medic'),
      cluster: CLUSTER,
      now: this.clock.now(),
      policy: this.policy,
    };
  }

  async start(): Promise<void> {
    await this.kube.start();
    this.kube.api.create('admin', 'namespaces', undefined, { metadata: { name: 'arc-runners' } });
    this.kube.api.create('admin', 'namespaces', undefined, { metadata: { name: 'web' } });
    await this.github.start();
    this.dynamo = await startEmbeddedDynamo('runner-medic-engine');
    const busUrl = await this.bus.start();
    this.busUrl = busUrl;
    this.facts = new DynamoFactsStore(
      createDocumentClient(this.dynamo.clientConfig),
      this.dynamo.tableName,
    );
    const settings = loadSettings(
      {
        TABLE_NAME: this.dynamo.tableName,
        DYNAMODB_ENDPOINT: this.dynamo.endpoint,
        EVENTBRIDGE_ENDPOINT: busUrl,
        EVENT_BUS_NAME: 'runner-medic',
        GITHUB_API_URL: this.github.baseUrl,
        GITHUB_APP_CREDENTIALS: JSON.stringify({
          appId: this.github.app.appId,
          privateKey: this.github.app.privateKey,
        }),
        CLUSTERS: JSON.stringify({
          [CLUSTER]: { kind: 'kubeconfig', kubeconfig: this.kube.kubeconfig('runner-medic') },
        }),
        CHECK_RUNS: 'off',
      },
      'engine',
    );
    const clients = loopbackClients(this.clock, { eventBridgeAttempts: 3 });
    const { deps } = await composeEngine(settings, clients)(() => 60_000);
    this.deps = {
      ...deps,
      deliveries: undefined,
      sightings: undefined,
      policy: async () => this.policy,
      log: {
        info: (message, fields) =>
          void this.logs.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
        warn: (message, fields) =>
          void this.logs.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
      },
      metrics: {
        count: (name, dimensions) => void this.metrics.push({ name, dimensions, value: 1 }),
        milliseconds: (name, dimensions, value) =>
          void this.metrics.push({ name, dimensions, value }),
      },
    };
  }

  get engine(): EngineDeps {
    if (!this.deps) throw new Error('harness not started');
    return this.deps;
  }

  /** The store, with its whole-table read for inspection. */
  get store(): DynamoFactsStore {
    if (!this.facts) throw new Error('harness not started');
    return this.facts;
  }

  usePolicy(patch: object): void {
    this.policy = mergeDeep(DEFAULT_POLICY, patch);
  }

  /** Mutations runner-medic made in the cluster. */
  medicKubeCalls() {
    return this.kube.audit.entries.filter((e) => e.by === 'runner-medic');
  }

  medicGithubCalls() {
    return this.github.audit().filter((a) => a.by === 'runner-medic');
  }

  remediationEvents(): Record<string, unknown>[] {
    return this.bus.entries
      .filter((e) => e.DetailType === 'Remediation')
      .map((e) => JSON.parse(e.Detail) as Record<string, unknown>);
  }

  async stop(): Promise<void> {
    await this.bus.stop();
    await this.dynamo?.close();
    await this.github.stop();
    await this.kube.stop();
  }
}
