import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { WAKE_SOURCE } from '../../functions/ports/wake-scheduler.js';
import type { EngineProvider } from '../../functions/config/compose-engine.js';
import { composeEngine } from '../../functions/config/compose-engine.js';
import { composeIngress } from '../../functions/config/compose-ingress.js';
import { loadSettings } from '../../functions/config/settings.js';
import type { Policy } from '../../functions/domain/policy/policy.js';
import { createGithubWebhookHandler } from '../../functions/handlers/github-webhook.js';
import { createReconcileHandler } from '../../functions/handlers/reconcile.js';
import { createRemediateHandler } from '../../functions/handlers/remediate.js';
import { startEmbeddedDynamo } from '../local/embedded-dynamo.js';
import { localLambdaContext } from '../../functions/serve/lambda-context.js';
import type { EmbeddedDynamo } from '../local/embedded-dynamo.js';
import { loopbackClients } from '../local/loopback-clients.js';
import type { FunctionUrlHandler, LocalServer } from '../../functions/serve/function-url-server.js';
import { startFunctionUrlServer } from '../../functions/serve/function-url-server.js';
import { EventBridgeSim } from '../../sim/aws/eventbridge-sim.js';
import type { ReceivedEntry } from '../../sim/aws/eventbridge-sim.js';
import type { SimClock } from '../../sim/clock.js';
import { Rng } from '../../sim/rng.js';
import type { GitHubSim } from '../../sim/github/github-sim.js';

export interface MedicHarnessOptions {
  clock: SimClock;
  github: GitHubSim;
  /** Kubeconfig per cluster name, authenticating as runner-medic. */
  kubeconfigs: Record<string, string>;
  /** Runner namespaces per cluster (CLUSTERS.<name>.namespaces); absent: all namespaces. */
  namespaces?: Record<string, string[]>;
  policy: Policy;
  sweepSeconds: number;
  /** Delay between a PutEvents and the target's invocation. @default 500 ms */
  busDelayMs?: number;
  /** Print runner-medic's own logs. @default false */
  verbose?: boolean;
  /** Cluster-side bus entries delivered twice, or held back up to 30 s (seeded). */
  eventDuplicate?: number;
  eventReorder?: number;
  seed?: number | string;
  /** Told of each audit event as it is published (the sandbox prints them in its timeline). */
  onRemediation?: (record: RemediationRecord) => void;
}

export interface RemediationRecord {
  at: number;
  detail: Record<string, unknown>;
}

const WEBHOOK_SECRET = 'scenario-webhook-secret';
/**
 * The time each invocation is told it has left: Lambda's longest timeout. The simulated clock
 * stands still while a handler runs, so its remaining time never shrinks; only middy's early
 * timeout runs on the host's real clock, and a slow or busy machine must not cut an invocation
 * short (and leave it running on after its answer).
 */
const INVOCATION_TIME_MS = 900_000;

/**
 * runner-medic as deployed, around the simulators: the functions' own settings and composition
 * (config/compose-*.ts) on loopback clients. GitHub's webhooks reach the real github-webhook
 * handler over HTTP; what it publishes, the cluster's exported events and EC2 events reach the
 * real remediate handler through a loopback EventBridge; the schedule drives reconcile. Every
 * handler reads time from the scenario's clock; the policy is the scenario's, and wake-ups are
 * timers on that clock.
 */
export class MedicHarness {
  readonly bus = new EventBridgeSim();
  readonly remediations: RemediationRecord[] = [];
  readonly errors: string[] = [];
  private dynamo: EmbeddedDynamo | undefined;
  private server: LocalServer | undefined;
  private remediate: ReturnType<typeof createRemediateHandler> | undefined;
  private reconcile: ReturnType<typeof createReconcileHandler> | undefined;
  private readonly wakes = new Set<number>();
  /** Handler invocations not yet settled: stop() waits for them before it closes the store. */
  private readonly running = new Set<Promise<unknown>>();
  private readonly chaos: Rng;
  private stopped = false;

  constructor(private readonly options: MedicHarnessOptions) {
    this.chaos = new Rng(`${String(options.seed ?? 1)}:bus`);
  }

  async start(): Promise<void> {
    const { clock, github } = this.options;
    this.dynamo = await startEmbeddedDynamo('runner-medic-scenario');
    const store = {
      TABLE_NAME: this.dynamo.tableName,
      DYNAMODB_ENDPOINT: this.dynamo.endpoint,
      EVENTBRIDGE_ENDPOINT: await this.bus.start(),
      EVENT_BUS_NAME: 'runner-medic',
    };
    const clients = loopbackClients(clock);
    const logger = () =>
      new Logger({
        serviceName: 'runner-medic',
        logLevel: this.options.verbose ? 'INFO' : 'SILENT',
      });
    const metrics = () => new Metrics({ namespace: 'RunnerMedic', serviceName: 'runner-medic' });

    const webhook = createGithubWebhookHandler({
      ingress: composeIngress(
        loadSettings({ ...store, GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET }, 'webhook'),
        clients,
      ),
      logger: logger(),
      metrics: metrics(),
    });
    const tracked: FunctionUrlHandler = (event, context) =>
      this.track((webhook as FunctionUrlHandler)(event, context));
    this.server = await startFunctionUrlServer({ '/webhook': tracked }, 0);
    github.setWebhookTarget({ url: `${this.server.url}/webhook`, secret: WEBHOOK_SECRET });

    const clusters = Object.entries(this.options.kubeconfigs).map(([name, kubeconfig]) => {
      const namespaces = this.options.namespaces?.[name];
      return [name, { kind: 'kubeconfig', kubeconfig, ...(namespaces ? { namespaces } : {}) }];
    });
    const settings = loadSettings(
      {
        ...store,
        GITHUB_API_URL: github.baseUrl,
        GITHUB_APP_CREDENTIALS: JSON.stringify({
          appId: github.app.appId,
          privateKey: github.app.privateKey,
        }),
        CLUSTERS: JSON.stringify(Object.fromEntries(clusters)),
      },
      'engine',
    );
    const composed = composeEngine(settings, clients);
    const engine: EngineProvider = async (remainingTimeMs) => {
      const setup = await composed(remainingTimeMs);
      return {
        ...setup,
        deps: {
          ...setup.deps,
          policy: async () => this.options.policy,
          wake: { wakeAt: async (at) => this.scheduleWake(at) },
        },
      };
    };
    this.remediate = createRemediateHandler({ engine, logger: logger(), metrics: metrics() });
    this.reconcile = createReconcileHandler({ engine, logger: logger(), metrics: metrics() });

    this.bus.onEntry((entry) => this.route(entry));
    // A deployment sweeps once when it starts: the sweep learns where the scale sets live.
    clock.after(1, 'first reconcile sweep', () =>
      this.invoke('reconcile', { source: 'aws.events', 'detail-type': 'Scheduled Event' }),
    );
    this.scheduleSweep(clock.now() + this.options.sweepSeconds * 1000);
  }

  /** A cluster-side event (exporter or EC2) put on the bus. */
  putClusterEvent(event: { source: string; 'detail-type': string; detail: unknown }): void {
    const { clock } = this.options;
    const held = this.chaos.chance(this.options.eventReorder ?? 0) ? this.chaos.int(30_000) : 0;
    const deliver = (delayMs: number) =>
      clock.after(delayMs, `bus ${event['detail-type']}`, () =>
        this.invoke('remediate', {
          ...event,
          id: 'sim',
          time: new Date(clock.now()).toISOString(),
        }),
      );
    deliver((this.options.busDelayMs ?? 500) + held);
    if (this.chaos.chance(this.options.eventDuplicate ?? 0)) deliver(5_000 + held);
  }

  /**
   * Stops taking invocations, waits for every one still running (a webhook GitHub's twin gave up
   * on keeps running in its handler) and only then closes the servers and the store, so that no
   * store call reaches a closed database.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.options.github.setWebhookTarget(undefined);
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    await this.server?.close();
    await this.bus.stop();
    await this.dynamo?.close();
  }

  private track<T>(invocation: Promise<T>): Promise<T> {
    this.running.add(invocation);
    const settled = () => void this.running.delete(invocation);
    invocation.then(settled, settled);
    return invocation;
  }

  private route(entry: ReceivedEntry): void {
    const detail = JSON.parse(entry.Detail) as Record<string, unknown>;
    if (entry.DetailType === 'Remediation') {
      const record = { at: this.options.clock.now(), detail };
      this.remediations.push(record);
      this.options.onRemediation?.(record);
      return;
    }
    this.options.clock.after(this.options.busDelayMs ?? 500, `bus ${entry.DetailType}`, () =>
      this.invoke('remediate', {
        source: entry.Source,
        'detail-type': entry.DetailType,
        detail,
        id: 'sim',
        time: new Date(this.options.clock.now()).toISOString(),
      }),
    );
  }

  private scheduleSweep(at: number): void {
    this.options.clock.at(at, 'reconcile sweep', async () => {
      if (this.stopped) return;
      await this.invoke('reconcile', { source: 'aws.events', 'detail-type': 'Scheduled Event' });
      this.scheduleSweep(at + this.options.sweepSeconds * 1000);
    });
  }

  private scheduleWake(at: number): void {
    if (this.wakes.has(at)) return;
    this.wakes.add(at);
    this.options.clock.at(at, 'wake', () =>
      this.invoke('remediate', { source: WAKE_SOURCE, 'detail-type': 'Wake', detail: {} }),
    );
  }

  private async invoke(fn: 'remediate' | 'reconcile', event: object): Promise<void> {
    if (this.stopped) return;
    const handler = fn === 'remediate' ? this.remediate : this.reconcile;
    try {
      const context = localLambdaContext(`runner-medic-scenario-${fn}`, INVOCATION_TIME_MS);
      await this.track(Promise.resolve(handler?.(event, context)));
    } catch (error) {
      // EventBridge would retry and then dead-letter; the scenario records it.
      this.errors.push(`${fn} at ${this.options.clock.now()}: ${(error as Error).message}`);
    }
  }
}
