/**
 * Leader election on a coordination.k8s.io/v1 Lease, with the semantics of client-go's
 * k8s.io/client-go/tools/leaderelection (leaderelection.go `tryAcquireOrRenew`, `release`;
 * resourcelock/leaselock.go):
 * - the Lease's `spec.holderIdentity` names the leader, `leaseDurationSeconds` how long a
 *   candidate waits, `renewTime` when the holder last renewed, `acquireTime` when it took it and
 *   `leaseTransitions` how often the holder changed;
 * - a candidate takes the Lease only when it has no holder, or when the record it observed has
 *   not changed for `leaseDuration` by ITS OWN clock (client-go compares the observed record and
 *   the local time it was observed, never the holder's `renewTime`, so clock skew does no harm);
 * - every write is an update with the resourceVersion read: of two candidates racing for an
 *   expired Lease, the second gets 409 Conflict and stays a follower;
 * - the leader renews every `retryPeriod`, and stops leading when it could not renew for
 *   `renewDeadline` (below `leaseDuration`, so it stops before anybody else may start);
 * - on shutdown the leader releases (ReleaseOnCancel): holder empty, `leaseDurationSeconds: 1`.
 */
import type { Clock } from '../ports/clock.js';
import type { KubeRequest } from './kube-http.js';
import { KubeHttpError } from './kube-http.js';
import type { LeaseSettings } from './serve-settings.js';
import type { Timers } from './timers.js';

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

interface LeaseObject {
  metadata?: { resourceVersion?: string };
  spec?: LeaseSpec;
}

export interface LeaderState {
  identity: string;
  leading: boolean;
  holder: string | null;
  /** When this replica last took or renewed the Lease (its own clock), or null. */
  renewedAt: number | null;
  lastError: string | null;
}

export interface LeaseElectorOptions {
  request: KubeRequest;
  lease: LeaseSettings & { identity: string };
  clock: Clock;
  timers: Timers;
  onChange?: (leading: boolean) => void;
  log?: (message: string, fields?: object) => void;
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaseElector {
  private observed: { record: string; at: number } | null = null;
  private renewedAt: number | null = null;
  private leading = false;
  private holder: string | null = null;
  private lastError: string | null = null;
  private cancel: (() => void) | null = null;
  /** The round of tryAcquireOrRenew under way, if any: a release waits for it to land. */
  private round: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly path: string;

  constructor(private readonly options: LeaseElectorOptions) {
    const { namespace, name } = options.lease;
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`;
  }

  /** Tries at once, then every retryPeriod. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.runRound();
  }

  private runRound(): Promise<void> {
    this.round = this.tick();
    return this.round;
  }

  /**
   * Whether this replica may act NOW: it holds the Lease and renewed it within renewDeadline.
   * Checked before every action (serve-runtime.ts guards the claims), so a leader that lost the
   * Lease stops before its next action, even while its renewal is still failing.
   */
  canAct(): boolean {
    if (!this.leading || this.renewedAt === null) return false;
    return this.options.clock.now() - this.renewedAt < this.options.lease.renewDeadlineMs;
  }

  state(): LeaderState {
    return {
      identity: this.options.lease.identity,
      leading: this.canAct(),
      holder: this.holder,
      renewedAt: this.renewedAt,
      lastError: this.lastError,
    };
  }

  /** Stops trying; the leader releases the Lease so a follower takes it without waiting. */
  async stop(release: boolean): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    this.cancel = null;
    // A renewal under way would land after the release and hold the Lease again: wait for it.
    await this.round;
    const wasLeading = this.leading;
    this.setLeading(false);
    if (release && wasLeading) await this.release();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.tryAcquireOrRenew();
      this.lastError = null;
    } catch (error) {
      this.lastError = (error as Error).message;
      this.options.log?.('lease: could not read or write the Lease', { error: this.lastError });
    }
    if (
      this.leading &&
      (this.renewedAt === null ||
        this.options.clock.now() - this.renewedAt >= this.options.lease.renewDeadlineMs)
    ) {
      this.options.log?.('lease: not renewed within the renew deadline; stopped leading');
      this.setLeading(false);
    }
    if (this.stopped) return;
    this.cancel = this.options.timers.after(this.options.lease.retryPeriodMs, 'lease', () =>
      this.runRound(),
    );
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const { request, clock } = this.options;
    const { identity, durationMs } = this.options.lease;
    const now = clock.now();
    let current: LeaseObject | null;
    try {
      current = (await request('GET', this.path)) as LeaseObject;
    } catch (error) {
      if (!(error instanceof KubeHttpError && error.statusCode === 404)) throw error;
      current = null;
    }
    if (current === null) {
      const created = await this.write('POST', this.record(now, null));
      if (created) this.took(created, now);
      return;
    }
    const spec = current.spec ?? {};
    const recordText = JSON.stringify(spec);
    if (this.observed?.record !== recordText) this.observed = { record: recordText, at: now };
    this.holder = spec.holderIdentity || null;
    const heldByOther = Boolean(spec.holderIdentity) && spec.holderIdentity !== identity;
    const observedFor = now - (this.observed?.at ?? now);
    const durationOfRecord = (spec.leaseDurationSeconds ?? durationMs / 1000) * 1000;
    if (heldByOther && observedFor < durationOfRecord) {
      this.setLeading(false);
      return;
    }
    const updated = await this.write('PUT', this.record(now, current));
    if (updated) this.took(updated, now);
    else this.setLeading(false);
  }

  /** The record to write: ours, keeping acquireTime while we hold it, counting transitions. */
  private record(now: number, current: LeaseObject | null): LeaseObject {
    const { identity, durationMs, name, namespace } = this.options.lease;
    const spec = current?.spec ?? {};
    const ours = spec.holderIdentity === identity;
    return {
      ...({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' } as object),
      metadata: {
        ...({ name, namespace } as object),
        ...(current?.metadata?.resourceVersion
          ? { resourceVersion: current.metadata.resourceVersion }
          : {}),
      },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: Math.round(durationMs / 1000),
        acquireTime: ours && spec.acquireTime ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (current && !ours ? 1 : 0),
      },
    };
  }

  /** Creates or updates; a 409 (another replica wrote first) is a lost round, not an error. */
  private async write(method: 'POST' | 'PUT', body: LeaseObject): Promise<LeaseObject | null> {
    const { namespace } = this.options.lease;
    const path =
      method === 'POST' ? `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases` : this.path;
    try {
      return (await this.options.request(method, path, body)) as LeaseObject;
    } catch (error) {
      if (error instanceof KubeHttpError && error.statusCode === 409) return null;
      throw error;
    }
  }

  private took(lease: LeaseObject, now: number): void {
    this.observed = { record: JSON.stringify(lease.spec ?? {}), at: now };
    this.renewedAt = now;
    this.holder = this.options.lease.identity;
    this.setLeading(true);
  }

  /** Writes the Lease free; a conflict (another write first) is read again, up to 3 times. */
  private async release(): Promise<void> {
    const now = this.options.clock.now();
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const current = (await this.options.request('GET', this.path)) as LeaseObject;
        if (current.spec?.holderIdentity !== this.options.lease.identity) return;
        const released = await this.write('PUT', {
          metadata: { ...current.metadata },
          spec: {
            holderIdentity: null,
            leaseDurationSeconds: 1,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: current.spec.leaseTransitions ?? 0,
          },
        });
        if (!released) continue;
        this.holder = null;
        this.options.log?.('lease: released');
        return;
      }
      throw new Error('the Lease changed under every release attempt');
    } catch (error) {
      this.options.log?.('lease: could not release the Lease; it expires by itself', {
        error: (error as Error).message,
      });
    }
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (!leading) this.renewedAt = null;
    this.options.onChange?.(leading);
  }
}
