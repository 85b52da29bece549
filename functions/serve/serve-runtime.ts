/**
 * `runner-medic serve`: one long-running process with the engine and the webhook ingress the
 * Lambda functions run (config/compose-engine.ts and compose-ingress.ts, reused as they are, with
 * serve's store, bus and timers in place of DynamoDB, EventBridge and SQS where configured so),
 * observing the cluster through informers (cluster-observer.ts) instead of exported events.
 *
 * Every replica serves the webhook and watches the cluster. Only the holder of the Lease
 * (lease-elector.ts) acts: it runs the engine on what arrives, sweeps and wakes on timers. A
 * follower hands what it receives to the store as facts and a timer (a store write, never an
 * action), so whoever leads decides it. Every claim of an action first asks the elector: a
 * replica that lost the Lease stops before its next action.
 */
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { LineWriter } from '../adapters/bus/stream-publisher.js';
import { StreamPublisher } from '../adapters/bus/stream-publisher.js';
import { openSqliteStores, type SqliteStores } from '../adapters/store/sqlite-stores.js';
import type { ClientFactories } from '../config/compose-engine.js';
import { awsClients, composeEngine } from '../config/compose-engine.js';
import { composeIngress } from '../config/compose-ingress.js';
import { loadSettings, type EngineSettings, type WebhookSettings } from '../config/settings.js';
import { OBSERVATION_SOURCE } from '../domain/model/observation.js';
import type { Policy } from '../domain/policy/policy.js';
import type { EngineDeps } from '../engine/engine-deps.js';
import { recordTrigger } from '../engine/record-trigger.js';
import { runEngine } from '../engine/run-engine.js';
import { subjectKey, subjectsOf } from '../engine/subjects.js';
import type { Subject } from '../engine/subjects.js';
import { fromFunctionUrlEvent, toFunctionUrlResult } from '../ingress/function-url.js';
import { parseRemediateInput } from '../ingress/remediate-input.js';
import { receiveWebhook } from '../ingress/receive-webhook.js';
import type { LocalServer } from './function-url-server.js';
import { startFunctionUrlServer } from './function-url-server.js';
import type { Clock } from '../ports/clock.js';
import type { EngineLog } from '../ports/engine-reporting.js';
import type { BusEvent, EventPublisher } from '../ports/event-publisher.js';
import type { FactsStore } from '../ports/facts-store.js';
import type { Trigger } from '../ports/trigger.js';
import { ClusterObserver, type Observation } from './cluster-observer.js';
import { kubeRequester, type KubeRequest } from './kube-http.js';
import { LeaseElector } from './lease-elector.js';
import { startProbeServer } from './probe-server.js';
import { ServeMetrics } from './serve-metrics.js';
import { loadServeSettings, type ServeSettings } from './serve-settings.js';
import type { Timers } from './timers.js';
import { WorkQueue } from './work-queue.js';

type Env = Record<string, string | undefined>;

/** The engine may act only while the Lease is held: a claim is refused otherwise. */
class NotLeaderError extends Error {
  constructor() {
    super('this replica does not hold the Lease: it does not act');
    this.name = 'NotLeaderError';
  }
}

export interface ServeRuntimeOptions {
  env: Env;
  clock: Clock;
  timers: Timers;
  /** Where the informers and the Lease reach the API server (in-cluster config in a pod). */
  kubeconfig: KubeConfig;
  /** JSON lines: audit events and log lines. */
  out: LineWriter;
  /** The AWS and GitHub clients (loopback ones in the sandbox). @default awsClients(clock) */
  clients?: ClientFactories;
  /** Replaces the policy the environment names (the sandbox plays the scenario's). */
  policy?: () => Promise<Policy>;
  /** Told of each audit event as it is published. */
  onAudit?: (detail: Record<string, unknown>) => void;
  /** Called between acting and publishing the audit event (a test's crash point). */
  afterAct?: EngineDeps['afterAct'];
  /**
   * Called between an action's effect and the record of its result (a test's crash point: a
   * process stopped there leaves the claim without a result, for the next leader to re-check).
   */
  beforeResult?: (key: string) => void | Promise<void>;
  /** How old a claim without a result must be before it is re-checked. @default the engine's */
  staleClaimMs?: number;
  /** The informers' wait before reconnecting a watch that ended cleanly. @default on `timers` */
  reconnectDelay?: (ms: number) => Promise<void>;
  /** Log lines too (default: warnings only, and audit events). */
  verbose?: boolean;
  /** Told of an engine run that failed (the scenario records it as the harness does). */
  onEngineError?: (work: string, error: unknown) => void;
}

export interface ServeStatus {
  identity: string;
  leading: boolean;
  holder: string | null;
  storeOpen: boolean;
  storeError: string | null;
  informersSynced: boolean;
  informers: ReturnType<ClusterObserver['status']>;
  queued: number;
  draining: boolean;
}

const INVOCATION_TIME_MS = 900_000;

export class ServeRuntime {
  readonly settings: ServeSettings;
  readonly metrics = new ServeMetrics();
  readonly identity: string;
  /** Where the webhook and the probes listen, once started. */
  urls: { webhookUrl: string; probeUrl: string } | undefined;
  private readonly queue: WorkQueue;
  private readonly log: EngineLog;
  private elector: LeaseElector | undefined;
  private observer: ClusterObserver | undefined;
  private deps: EngineDeps | undefined;
  private sqlite: SqliteStores | undefined;
  private storeError: string | null = null;
  private webhookServer: LocalServer | undefined;
  private probeServer: LocalServer | undefined;
  private readonly cancels = new Set<() => void>();
  private readonly wakes = new Map<number, () => void>();
  private draining = false;
  private stopped = false;

  constructor(private readonly options: ServeRuntimeOptions) {
    this.settings = loadServeSettings(options.env);
    this.identity = this.settings.lease.identity ?? `runner-medic-${process.pid}`;
    const line = (level: 'info' | 'warn') => (message: string, fields?: object) => {
      if (level === 'info' && !options.verbose) return;
      options.out.write(
        `${JSON.stringify({ level, time: new Date(options.clock.now()).toISOString(), replica: this.identity, message, ...fields })}\n`,
      );
    };
    this.log = { info: line('info'), warn: line('warn') };
    this.queue = new WorkQueue((label, error) => {
      if (error instanceof NotLeaderError) {
        this.log.warn('stopped acting: the Lease is no longer held', { work: label });
        return;
      }
      this.metrics.count('ActionError', { work: label });
      options.onEngineError?.(label, error);
      this.log.warn('engine run failed', { work: label, error: (error as Error).message });
    });
  }

  /** Opens the store, composes the engine, serves the webhook, starts watching and electing. */
  async start(): Promise<{ webhookUrl: string; probeUrl: string }> {
    const { options, settings } = this;
    const { clock } = options;
    this.probeServer = await startProbeServer(
      { status: () => this.status(), metrics: this.metrics },
      settings.probePort,
      settings.host,
    );
    const clients = options.clients ?? awsClients(clock);
    const shared = this.sharedEnv();
    const engineSettings = loadSettings(shared, 'engine');
    const webhookSettings = loadSettings(shared, 'webhook');

    try {
      if (settings.store === 'sqlite') this.sqlite = openSqliteStores(settings.sqlitePath, clock);
    } catch (error) {
      // Never acting without claims: no store, no engine, no Lease; /readyz says why.
      this.storeError = (error as Error).message;
      this.log.warn('store cannot be opened; not ready, not acting', { error: this.storeError });
      this.metrics.count('StoreUnavailable', {});
    }

    const bus = this.bus(new StreamPublisher(options.out, clock));
    if (this.storeError === null) this.deps = await this.composeDeps(engineSettings, clients, bus);

    this.webhookServer = await this.serveWebhook(webhookSettings, clients, bus);

    const request = kubeRequester(options.kubeconfig);
    this.observer = new ClusterObserver({
      kubeconfig: options.kubeconfig,
      request,
      cluster: settings.cluster,
      runnerNamespaces: settings.runnerNamespaces,
      nodeEventsNamespace: settings.nodeEventsNamespace,
      clock,
      timers: options.timers,
      onObservation: (o) => this.observed(o),
      onError: (path, error) => {
        this.metrics.count('KubeApiUnreachable', { informer: path });
        this.log.warn('informer failed; retrying with backoff', { informer: path, error });
      },
      ...(options.reconnectDelay ? { reconnectDelay: options.reconnectDelay } : {}),
    });
    await this.observer.start();

    if (this.deps) await this.startElecting(request);
    this.urls = { webhookUrl: this.webhookServer.url, probeUrl: this.probeServer.url };
    return this.urls;
  }

  /** The engine as the Lambda functions compose it, on serve's store, bus, timers and metrics. */
  private async composeDeps(
    engineSettings: EngineSettings,
    clients: ClientFactories,
    bus: EventPublisher,
  ): Promise<EngineDeps> {
    const { options } = this;
    const setup = await composeEngine(engineSettings, clients)(() => INVOCATION_TIME_MS);
    const store = this.sqlite?.facts ?? setup.deps.store;
    return {
      ...setup.deps,
      store: this.guarded(store),
      ...(this.sqlite
        ? {
            deliveries: this.sqlite.ledger,
            watchCursors: this.sqlite.watchCursors,
            sightings: undefined,
          }
        : {}),
      bus,
      wake: { wakeAt: async (at) => this.wakeAt(at) },
      ...(options.policy ? { policy: options.policy } : {}),
      remainingTimeMs: () => INVOCATION_TIME_MS,
      log: this.log,
      metrics: this.metrics.engine(),
      ...(options.afterAct ? { afterAct: options.afterAct } : {}),
      ...(options.staleClaimMs !== undefined ? { staleClaimMs: options.staleClaimMs } : {}),
    };
  }

  /** Elects with the Lease, then sweeps and polls the stored wake-ups on timers while leading. */
  private async startElecting(request: KubeRequest): Promise<void> {
    const { options, settings } = this;
    const { clock } = options;
    this.elector = new LeaseElector({
      request,
      lease: { ...settings.lease, identity: this.identity },
      clock,
      timers: options.timers,
      onChange: (leading) => {
        this.metrics.gauge('RunnerMedicLeader', {}, leading ? 1 : 0);
        this.log.warn(leading ? 'took the Lease: acting' : 'does not hold the Lease: not acting', {
          lease: `${settings.lease.namespace}/${settings.lease.name}`,
        });
        // A replica that starts leading sweeps at once: it learns where the scale sets live.
        if (leading) this.once(1, 'first sweep', () => this.sweep());
      },
      log: (message, fields) => this.log.warn(message, fields),
    });
    await this.elector.start();
    this.every(settings.sweepMs, settings.sweepMs, 'sweep', () => this.sweep());
    this.every(settings.wakePollMs, settings.wakePollMs, 'wake poll', () => this.pollWakes());
  }

  /** The webhook on its port: the ingress of the Lambda function, on serve's store and bus. */
  private async serveWebhook(
    webhookSettings: WebhookSettings,
    clients: ClientFactories,
    bus: EventPublisher,
  ): Promise<LocalServer> {
    const { settings } = this;
    const ingress = composeIngress(webhookSettings, clients);
    const webhook = async (event: LambdaFunctionURLEvent) => {
      // Nothing is stored without the store: GitHub is told to redeliver, never that it was taken.
      const unavailable = this.draining
        ? 'shutting down; redeliver to retry'
        : this.storeError !== null
          ? 'store unavailable; redeliver to retry'
          : null;
      if (unavailable !== null)
        return toFunctionUrlResult({
          statusCode: 503,
          body: { status: 'error', deliveryId: null, reason: unavailable },
        });
      const base = await ingress();
      const result = await receiveWebhook(fromFunctionUrlEvent(event), {
        ...base,
        ...(this.sqlite ? { ledger: this.sqlite.ledger } : {}),
        publisher: bus,
      });
      const { outcome } = result;
      const reason =
        'reason' in outcome ? outcome.reason : 'kind' in outcome ? outcome.kind : 'none';
      this.metrics.count('WebhookDelivery', { outcome: outcome.status, reason });
      if (result.error)
        this.log.warn('webhook delivery failed', { reason, error: String(result.error) });
      return toFunctionUrlResult(result.response);
    };
    return startFunctionUrlServer({ '/webhook': webhook }, settings.port, settings.host);
  }

  status(): ServeStatus {
    const leader = this.elector?.state();
    return {
      identity: this.identity,
      leading: leader?.leading ?? false,
      holder: leader?.holder ?? null,
      storeOpen: this.deps !== undefined,
      storeError: this.storeError,
      informersSynced: this.observer?.synced() ?? false,
      informers: this.observer?.status() ?? [],
      queued: this.queue.size(),
      draining: this.draining,
    };
  }

  /**
   * Nothing queued or running, and (unless told the cluster did not change) every informer holds
   * what the API server lists now.
   */
  async settled(options: { informers: boolean } = { informers: true }): Promise<void> {
    for (;;) {
      await this.queue.idle();
      if (!options.informers || !this.observer || (await this.observer.caughtUp())) {
        if (this.queue.size() === 0) return;
      } else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * SIGTERM: take no more work (the webhook answers 503, queued work is handed to the store for
   * whoever leads next), let the running engine finish its action and its claim, release the
   * Lease, close the servers and the store.
   */
  async drain(): Promise<void> {
    if (this.stopped) return;
    this.draining = true;
    this.queue.close();
    await this.queue.idle();
    await this.shutdown(true);
  }

  /** Stops without releasing anything, as a killed process would (tests' SIGKILL). */
  async abandon(): Promise<void> {
    this.draining = true;
    this.queue.kill();
    await this.shutdown(false);
  }

  private async shutdown(release: boolean): Promise<void> {
    this.stopped = true;
    for (const cancel of [...this.cancels, ...this.wakes.values()]) cancel();
    this.cancels.clear();
    this.wakes.clear();
    await this.observer?.stop();
    await this.elector?.stop(release);
    await this.webhookServer?.close();
    await this.probeServer?.close();
    this.sqlite?.close();
  }

  /**
   * The engine's CLUSTERS and store settings for serve: this cluster through the given
   * kubeconfig (in a pod: its service account, re-read as the kubelet rotates the token), its
   * runner namespaces, and audit events as JSON lines.
   */
  private sharedEnv(): Env {
    const { env, kubeconfig } = this.options;
    const { cluster, runnerNamespaces } = this.settings;
    return {
      ...env,
      TABLE_NAME: env.TABLE_NAME || 'runner-medic',
      EVENT_SINK: 'stdout',
      CLUSTERS:
        env.CLUSTERS ||
        JSON.stringify({
          [cluster]: {
            kind: 'kubeconfig',
            kubeconfig: kubeconfig.exportConfig(),
            namespaces: runnerNamespaces,
          },
        }),
    };
  }

  /** Every claim asks the elector first. */
  private guarded(store: FactsStore): FactsStore {
    const elector = () => this.elector;
    const { beforeResult } = this.options;
    return new Proxy(store, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        const call = (args: unknown[]) =>
          (value as (...a: unknown[]) => unknown).apply(target, args);
        if (property === 'claimAction')
          return (...args: unknown[]) => {
            if (!elector()?.canAct()) throw new NotLeaderError();
            return call(args);
          };
        if (property === 'finishAction' && beforeResult)
          return async (...args: unknown[]) => {
            await beforeResult(String(args[0]));
            return call(args);
          };
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  }

  /** The bus: observations go to the engine (or the store, on a follower), the rest to stdout. */
  private bus(audit: EventPublisher): EventPublisher {
    return {
      publish: async (events: readonly BusEvent[]) => {
        for (const event of events) {
          if (event.source === OBSERVATION_SOURCE && event.detailType !== 'Remediation') {
            const input = parseRemediateInput({
              source: event.source,
              'detail-type': event.detailType,
              detail: event.detail,
            });
            if (input.ok) {
              await this.handOff(input.trigger, 0);
              continue;
            }
          }
          await audit.publish([event]);
          if (event.detailType === 'Remediation')
            this.options.onAudit?.(event.detail as Record<string, unknown>);
        }
      },
    };
  }

  private observed(observation: Observation): void {
    if (this.stopped || !this.deps) return;
    // Every replica watches: a follower's record is the leader's safety net, due when a Lease
    // left by a dead leader could have been taken over.
    const delay = this.elector?.canAct() ? 0 : this.settings.lease.durationMs;
    if (observation.kind === 'events') {
      const trigger: Trigger = {
        kind: 'cluster',
        input: { kind: 'kube-events', events: observation.events, rejected: [] },
      };
      void this.handOff(trigger, delay).catch((error: unknown) =>
        this.log.warn('could not hand an event on', { error: (error as Error).message }),
      );
      return;
    }
    const deps = this.deps;
    void (async () => {
      const now = this.options.clock.now();
      for (const loss of observation.losses) await deps.store.recordLoss(loss, now);
      for (const signal of observation.signals) await deps.store.recordNodeSignal(signal, now);
      await this.decideLater(observation.subjects, now + delay);
    })().catch((error: unknown) =>
      this.log.warn('could not record an observation', { error: (error as Error).message }),
    );
  }

  /**
   * The leader runs the engine on a trigger now; a follower (or a replica shutting down) records
   * its facts and a timer for its subjects, at `now + delay`, for whoever leads.
   */
  private async handOff(trigger: Trigger, delay: number): Promise<void> {
    const deps = this.deps;
    if (!deps) return;
    const later = async () => {
      const now = this.options.clock.now();
      await recordTrigger(trigger, deps.store, now);
      await this.decideLater(subjectsOf(trigger), now + delay, false);
    };
    if (!this.elector?.canAct() || this.draining) return later();
    void this.queue.push(
      `trigger ${trigger.kind}`,
      async () => {
        const report = await runEngine(trigger, deps);
        this.metrics.count('EngineRun', { trigger: trigger.kind });
        this.log.info('engine run', {
          trigger: trigger.kind,
          recorded: report.recorded,
          actions: report.actions.length,
        });
      },
      later,
    );
  }

  private async decideLater(subjects: Subject[], at: number, wakeNow = true): Promise<void> {
    if (!this.deps || subjects.length === 0) return;
    const now = this.options.clock.now();
    await this.deps.store.scheduleWake(at, now, subjects.map(subjectKey));
    if (wakeNow && at <= now && this.elector?.canAct()) await this.wake();
  }

  private sweep(): Promise<void> {
    const deps = this.deps;
    if (!deps || !this.elector?.canAct()) return Promise.resolve();
    return this.queue.push('sweep', async () => {
      const report = await runEngine({ kind: 'sweep' }, deps);
      this.metrics.count('SweepRun', {});
      this.log.info('sweep', { actions: report.actions.length, held: report.held.length });
    });
  }

  private wake(): Promise<void> {
    const deps = this.deps;
    if (!deps || !this.elector?.canAct()) return Promise.resolve();
    return this.queue.push('wake', async () => {
      const report = await runEngine({ kind: 'wake' }, deps);
      this.metrics.count('EngineRun', { trigger: 'wake' });
      this.log.info('wake', { actions: report.actions.length });
    });
  }

  /** Timers another replica (or this one, before it led) recorded in the store. */
  private async pollWakes(): Promise<void> {
    const deps = this.deps;
    if (!deps || !this.elector?.canAct()) return;
    const now = this.options.clock.now();
    // nextWake names only a wake-up still to come: what fell due is read as due.
    const due = (await deps.store.dueWakes(now, 1)).length > 0;
    if (due) await this.wake();
  }

  /** The engine's WakeScheduler: a timer on serve's clock. */
  private wakeAt(at: number): void {
    if (this.wakes.has(at) || this.stopped) return;
    const delay = Math.max(0, at - this.options.clock.now());
    this.wakes.set(
      at,
      this.options.timers.after(delay, 'wake', async () => {
        this.wakes.delete(at);
        await this.wake();
      }),
    );
  }

  private once(ms: number, label: string, run: () => Promise<void>): void {
    const cancel = this.options.timers.after(ms, label, async () => {
      this.cancels.delete(cancel);
      if (!this.stopped) await run();
    });
    this.cancels.add(cancel);
  }

  /** Runs `run` after `first` ms, then every `period` ms, until shutdown. */
  private every(first: number, period: number, label: string, run: () => Promise<void>): void {
    let cancel: () => void = () => undefined;
    const stop = () => cancel();
    const schedule = (ms: number) => {
      cancel = this.options.timers.after(ms, label, async () => {
        if (this.stopped) return;
        schedule(period);
        try {
          await run();
        } catch (error) {
          this.log.warn(`${label} failed`, { error: (error as Error).message });
        }
      });
    };
    schedule(first);
    this.cancels.add(stop);
  }
}
