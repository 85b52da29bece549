/**
 * An API server serve cannot reach, on the simulated clock: the twin refuses every connection
 * (an endpoint gone private, a security group that rejects) or answers every request 503 (a load
 * balancer with no healthy API server behind it). Each informer is retried with the backoff
 * cluster-observer.ts promises (1 s doubling to 30 s), never in a tight loop; the Lease is tried
 * every retry period and the leader stops leading after its renew deadline; /readyz fails and
 * says which informers fail, /metrics counts KubeApiUnreachable per informer and shows
 * RunnerMedicInformersSynced 0. When the API server answers again, the informers resume, /readyz
 * is ready and the replica leads again.
 */
import type { Unreachable } from '../../sim/kube/api/http-server.js';
import { sample, startServeOnTwin, type ServeOnTwin } from './serve-twin-fixture.js';

/** How long the API server is unreachable, in simulated ms. */
const OUTAGE_MS = 100_000;
const LOOKS = 1000;
/** serve's default renew deadline: a leader that could not renew for this long stops. */
const RENEW_DEADLINE_MS = 10_000;

/** The promised backoff: the wait before retry `n` (1-based). */
const backoff = (n: number) => Math.min(1000 * 2 ** (n - 1), 30_000);

/** Failures of one informer within `ms` of its first: the first, then one per retry due. */
function failuresWithin(ms: number): number {
  let at = 0;
  let failures = 1;
  for (;;) {
    at += backoff(failures);
    if (at > ms) return failures;
    failures++;
  }
}

let serve: ServeOnTwin;

afterEach(() => serve.stop());

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let look = 0; look < LOOKS; look++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${what}: not after ${LOOKS} looks; ${JSON.stringify(serve.runtime.status())}`);
}

async function probe(path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${serve.urls.probeUrl}${path}`);
  return { status: response.status, text: await response.text() };
}

test.each<[Unreachable]>([['refused'], ['503']])(
  'an API server that is unreachable (%s) is retried with backoff, reported, and recovered from',
  async (mode) => {
    serve = await startServeOnTwin();
    const { server, clock, runtime } = serve;
    await until('ready and leading', () => runtime.status().informersSynced);
    expect(runtime.status().leading).toBe(true);
    expect((await probe('/readyz')).status).toBe(200);
    const informers = runtime.status().informers.map((i) => i.path);
    const from = server.audit.requests.length;

    await server.setUnreachable(mode);
    // The open watches end; each informer reconnects at once and fails.
    await until('every informer fails', () =>
      runtime.status().informers.every((i) => i.error !== null),
    );
    const start = clock.now();
    while (clock.now() - start < OUTAGE_MS) await clock.advance(1000);

    // /readyz fails, and says which informers fail.
    const readyz = await probe('/readyz');
    expect(readyz.status).toBe(503);
    const reasons = (JSON.parse(readyz.text) as { reasons: string[] }).reasons;
    expect(reasons).toEqual(
      informers.map((path) => expect.stringContaining(`informer ${path} failing`)),
    );

    // Every informer backed off as promised: far from once a second, exactly the doubling.
    const metrics = (await probe('/metrics')).text;
    const expected = failuresWithin(OUTAGE_MS);
    expect(expected).toBeLessThan(OUTAGE_MS / 1000 / 10);
    for (const path of informers)
      expect(sample(metrics, 'KubeApiUnreachable', `informer="${path}"`)).toBe(expected);
    expect(sample(metrics, 'RunnerMedicInformersSynced')).toBe(0);
    // The Lease could not be renewed: the leader stopped leading, and so never acted.
    expect(sample(metrics, 'RunnerMedicLeader')).toBe(0);
    expect(runtime.status().leading).toBe(false);

    if (mode === '503') {
      // The twin counted what reached it: one watch per failure of each informer (each resumes
      // from its resourceVersion), the Lease read once per retry period (2 s), and the engine's
      // own reads (its first sweep, due as it took the Lease) only while it still led.
      const reached = server.audit.requests.slice(from).filter((r) => r.by === 'runner-medic');
      const watches = reached.filter((r) => r.path.includes('watch=true'));
      for (const path of informers)
        expect(watches.filter((r) => r.path.split('?')[0] === path)).toHaveLength(expected);
      expect(watches).toHaveLength(expected * informers.length);
      const leaseReads = reached.filter((r) => r.path.includes('/leases/')).length;
      expect(leaseReads).toBeLessThanOrEqual(OUTAGE_MS / 2000 + 1);
      expect(leaseReads).toBeGreaterThanOrEqual(OUTAGE_MS / 2000 - 1);
      const engineReads = reached.filter(
        (r) => !r.path.includes('watch=true') && !r.path.includes('/leases/'),
      );
      expect(engineReads.length).toBeGreaterThan(0);
      expect(engineReads.every((r) => r.at - start < RENEW_DEADLINE_MS)).toBe(true);
    }

    // Back: each informer's next retry resumes it; the replica is ready and leads again.
    await server.setUnreachable(undefined);
    for (let s = 0; s < 30 && !runtime.status().informersSynced; s++) await clock.advance(1000);
    await until('the informers are answered again', () => runtime.status().informersSynced);
    await clock.advance(2000);
    expect(runtime.status().leading).toBe(true);
    expect((await probe('/readyz')).status).toBe(200);
    const after = (await probe('/metrics')).text;
    expect(sample(after, 'RunnerMedicInformersSynced')).toBe(1);
    expect(sample(after, 'RunnerMedicLeader')).toBe(1);
  },
  120_000,
);
