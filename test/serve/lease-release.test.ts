/**
 * serve's Lease on shutdown: the leader releases it (holder empty) even when a renewal of its own
 * is still on the wire when SIGTERM comes, or another write changes it first. Driven over the real
 * requester (kube-http.ts) against the Kubernetes twin; the renewal is held back by a gate in
 * front of the requester, and the elector's timers run on a simulated clock.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { SimClock } from '../../sim/clock.js';
import { SimCluster } from '../../sim/kube/cluster.js';
import { kubeRequester, type KubeRequest } from '../../functions/serve/kube-http.js';
import { LeaseElector } from '../../functions/serve/lease-elector.js';
import { simTimers } from './serve-twin-fixture.js';

const LEASE = {
  name: 'runner-medic',
  namespace: 'runner-medic',
  identity: 'runner-medic-a',
  durationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

let cluster: SimCluster;
let request: KubeRequest;
const clock = new SimClock(Date.UTC(2026, 11, 6, 12));

beforeAll(async () => {
  cluster = new SimCluster({ name: 'lease-cluster', clock });
  cluster.createNamespace('runner-medic');
  await cluster.start();
  const kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig('runner-medic'));
  request = kubeRequester(kc);
});
afterAll(() => cluster.stop());

const holder = () =>
  (
    cluster.api.tryGet('leases', 'runner-medic', 'runner-medic') as
      { spec?: { holderIdentity?: string | null } } | undefined
  )?.spec?.holderIdentity ?? null;

/**
 * The elector's requests; the next renewal (a PUT naming a holder) can be held on the wire. A read
 * of the Lease made while it is held (a release's read) is answered first, and the renewal then
 * lands before that reader can write: the order in which a stop and a renewal race in production.
 */
function gatedRequests() {
  const sent: string[] = [];
  let onTheWire: (() => void) | null = null;
  let held: { open: () => void; landed: Promise<void>; readBeside: boolean } | null = null;
  const gated: KubeRequest = async (method, path, body) => {
    const spec = (body as { spec?: { holderIdentity?: string | null } } | undefined)?.spec;
    const kind = method !== 'PUT' ? method : spec?.holderIdentity ? 'PUT renew' : 'PUT release';
    sent.push(kind);
    if (kind === 'PUT renew' && onTheWire) {
      const reached = onTheWire;
      onTheWire = null;
      let open = () => undefined as void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let landed = () => undefined as void;
      held = {
        open,
        landed: new Promise<void>((resolve) => (landed = resolve)),
        readBeside: false,
      };
      reached();
      await gate;
      try {
        return await request(method, path, body);
      } finally {
        held = null;
        landed();
      }
    }
    if (method === 'GET' && held) {
      const renewal = held;
      renewal.readBeside = true;
      const answer = await request(method, path, body);
      renewal.open();
      await renewal.landed;
      return answer;
    }
    return request(method, path, body);
  };
  return {
    gated,
    sent,
    /** Holds the next renewal; resolves once it is on the wire. */
    holdNextRenewal: () => new Promise<void>((resolve) => (onTheWire = resolve)),
    /** Lets the held renewal land, unless a read beside it already does. */
    letItLand: () => {
      if (held && !held.readBeside) held.open();
    },
  };
}

const elector = (requests: KubeRequest, log: string[]) =>
  new LeaseElector({
    request: requests,
    lease: LEASE,
    clock,
    timers: simTimers(clock),
    log: (message) => log.push(message),
  });

describe('the Lease on shutdown', () => {
  it('is released after a renewal still on the wire when the stop comes, not renewed again by it', async () => {
    const requests = gatedRequests();
    const log: string[] = [];
    const a = elector(requests.gated, log);
    await a.start();
    expect(holder()).toBe('runner-medic-a');

    // The next renewal leaves, and is held on the wire while SIGTERM stops the elector.
    const onTheWire = requests.holdNextRenewal();
    const advanced = clock.advance(LEASE.retryPeriodMs);
    await onTheWire;
    const stopped = a.stop(true);
    requests.letItLand();
    await Promise.all([advanced, stopped]);

    expect(holder()).toBeNull();
    expect(log).toContain('lease: released');
    // The release read the Lease after the renewal landed: no conflict, one release.
    expect(requests.sent.filter((s) => s === 'PUT release')).toHaveLength(1);
  });

  it('reads the Lease again when another write changed it first, and still releases it', async () => {
    const log: string[] = [];
    let conflicts = 1;
    const requests: KubeRequest = async (method, path, body) => {
      const release =
        method === 'PUT' &&
        (body as { spec?: { holderIdentity?: string | null } }).spec?.holderIdentity === null;
      if (release && conflicts-- > 0)
        // Another write lands between the release's read and its write (say, an annotation).
        cluster.api.modify('admin', 'leases', 'runner-medic', 'runner-medic', (o) => {
          o.metadata.annotations = { touched: 'yes' };
        });
      return request(method, path, body);
    };
    const a = elector(requests, log);
    await a.start();
    expect(holder()).toBe('runner-medic-a');
    await a.stop(true);
    expect(holder()).toBeNull();
    expect(log).toContain('lease: released');
  });
});
