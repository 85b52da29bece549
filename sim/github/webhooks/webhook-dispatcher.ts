import type { SimClock } from '../../clock.js';
import type { Rng } from '../../rng.js';
import type { GitHubEvent } from '../model/github-event.js';
import type { IdSource } from '../model/id-source.js';
import type { WebhookKnobs } from './webhook-knobs.js';
import { DEFAULT_KNOBS } from './webhook-knobs.js';
import { signPayload } from './sign-payload.js';

/** One attempt to deliver one event (a redelivery or duplicate is a new attempt with the same GUID). */
export interface DeliveryRecord {
  /** Numeric id of this attempt (as `GET /app/hook/deliveries` lists it). */
  id: number;
  guid: string;
  event: 'workflow_job' | 'workflow_run';
  action: string;
  installationId: number | null;
  repositoryId: number;
  /** Sim time the event happened, and the attempt was (or is to be) sent. */
  createdAt: number;
  scheduledAt: number;
  deliveredAt: number | null;
  /** The receiver's HTTP status; null when dropped, pending, or the request failed. */
  statusCode: number | null;
  error: string | null;
  kind: 'first' | 'duplicate' | 'redelivery';
  dropped: boolean;
  body: string;
  headers: Record<string, string>;
}

export interface WebhookTarget {
  url: string;
  secret: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

interface Prepared {
  guid: string;
  event: GitHubEvent['type'];
  action: string;
  installationId: number | null;
  repositoryId: number;
  createdAt: number;
  body: string;
}

/** Turns model events into signed HTTP deliveries scheduled on the sim clock. */
export class WebhookDispatcher {
  private readonly records: DeliveryRecord[] = [];
  private readonly prepared = new Map<string, Prepared>();
  private target: WebhookTarget | undefined;
  private readonly userAgent: string;
  knobs: WebhookKnobs = { ...DEFAULT_KNOBS };

  constructor(
    private readonly clock: SimClock,
    private readonly rng: Rng,
    private readonly ids: IdSource,
    private readonly hook: { hookId: number; appId: number },
  ) {
    this.userAgent = `GitHub-Hookshot/${ids.hex(7)}`;
  }

  setTarget(target: WebhookTarget | undefined): void {
    if (target && !LOOPBACK.has(new URL(target.url).hostname))
      throw new Error(`webhook URL must be on loopback (127.0.0.1), got ${target.url}`);
    this.target = target;
  }

  /** Queues the delivery of an event whose JSON body was built at the moment it happened. */
  enqueue(event: GitHubEvent, body: unknown, installationId: number | null): void {
    const prepared: Prepared = {
      guid: this.ids.guid(),
      event: event.type,
      action: event.action,
      installationId,
      repositoryId: event.run.repo.id,
      createdAt: this.clock.now(),
      body: JSON.stringify(body),
    };
    this.prepared.set(prepared.guid, prepared);
    const knobs = this.knobs;
    let delay = knobs.delayMs + (knobs.jitterMs > 0 ? this.rng.int(knobs.jitterMs) : 0);
    if (this.rng.chance(knobs.reorder))
      delay += 1 + this.rng.int(Math.max(1, knobs.reorderWindowMs));
    const dropped = this.rng.chance(knobs.drop);
    this.schedule(prepared, delay, 'first', dropped);
    if (this.rng.chance(knobs.duplicate))
      this.schedule(prepared, delay + knobs.duplicateAfterMs, 'duplicate', false);
  }

  /** Sends an earlier delivery again, with the same `X-GitHub-Delivery`. */
  redeliver(guid: string, delayMs = 0): DeliveryRecord {
    const prepared = this.prepared.get(guid);
    if (!prepared) throw new Error(`no delivery with GUID ${guid}`);
    return this.schedule(prepared, delayMs, 'redelivery', false);
  }

  deliveries(): readonly DeliveryRecord[] {
    return this.records;
  }

  private schedule(
    prepared: Prepared,
    delayMs: number,
    kind: DeliveryRecord['kind'],
    dropped: boolean,
  ): DeliveryRecord {
    const scheduledAt = this.clock.now() + delayMs;
    const record: DeliveryRecord = {
      id: this.ids.next('delivery-seq'),
      guid: prepared.guid,
      event: prepared.event,
      action: prepared.action,
      installationId: prepared.installationId,
      repositoryId: prepared.repositoryId,
      createdAt: prepared.createdAt,
      scheduledAt,
      deliveredAt: null,
      statusCode: null,
      error: dropped ? 'dropped' : null,
      kind,
      dropped,
      body: prepared.body,
      headers: this.headers(prepared),
    };
    this.records.push(record);
    if (!dropped)
      this.clock.at(
        scheduledAt,
        `webhook ${prepared.event}.${prepared.action} ${prepared.guid}`,
        () => this.send(record),
      );
    return record;
  }

  private headers(prepared: Prepared): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': this.userAgent,
      'x-github-event': prepared.event,
      'x-github-delivery': prepared.guid,
      'x-github-hook-id': String(this.hook.hookId),
      'x-github-hook-installation-target-type': 'integration',
      'x-github-hook-installation-target-id': String(this.hook.appId),
    };
    if (this.target)
      headers['x-hub-signature-256'] = signPayload(this.target.secret, prepared.body);
    return headers;
  }

  private async send(record: DeliveryRecord): Promise<void> {
    record.deliveredAt = this.clock.now();
    const target = this.target;
    if (!target) {
      record.error = 'no webhook URL configured';
      return;
    }
    record.headers['x-hub-signature-256'] = signPayload(target.secret, record.body);
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: record.headers,
        body: record.body,
        signal: AbortSignal.timeout(this.knobs.timeoutMs),
      });
      await response.arrayBuffer();
      record.statusCode = response.status;
      if (!response.ok) record.error = `HTTP ${response.status}`;
    } catch (error) {
      record.error = error instanceof Error ? error.message : String(error);
    }
  }
}
