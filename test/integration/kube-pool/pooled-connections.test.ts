/**
 * A cluster's requests share keep-alive connections: real @kubernetes/client-node over TLS to the
 * API server twin, with a TCP pass-through in front of it that counts the connections opened.
 */
import { createConnection, createServer, type AddressInfo, type Server } from 'node:net';
import { ClusterConnections } from '../../../functions/adapters/kubernetes/cluster-connections.js';
import { CoreV1Api, KubeConfig } from '../../../functions/adapters/kubernetes/client-node.js';
import { PooledKubeConfig } from '../../../functions/adapters/kubernetes/pooled-kube-config.js';
import type { SimClock } from '../../../sim/clock.js';
import type { ApiServer } from '../../../sim/kube/api/api-server.js';
import { renderKubeconfig } from '../../../sim/kube/kubeconfig.js';
import { NS, seedEphemeralRunner, startSim } from '../kube-gateway/sim-fixture.js';

/** Forwards TCP to `target` (host:port) and counts the connections made to it. */
class CountingPassThrough {
  connections = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<{ destroy(): void }>();

  constructor(private readonly target: URL) {}

  async start(): Promise<string> {
    const server = createServer((client) => {
      this.connections++;
      const upstream = createConnection(Number(this.target.port), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const REQUESTS = 10;

describe('one keep-alive pool per cluster connection', () => {
  let sim: { server: ApiServer; clock: SimClock };
  let pass: CountingPassThrough;
  let kubeconfig: (actor: string) => string;

  beforeAll(async () => {
    sim = await startSim({ clusterName: 'pooled', seed: 41 });
    seedEphemeralRunner(sim.server, 'runner-1');
    pass = new CountingPassThrough(new URL(sim.server.url));
    const server = await pass.start();
    kubeconfig = (actor) => {
      sim.server.addActor(actor);
      return renderKubeconfig({
        clusterName: 'pooled',
        server,
        caPem: sim.server.caPem,
        user: actor,
        token: sim.server.token(actor),
      });
    };
  });

  afterAll(async () => {
    await pass.stop();
    await sim.server.stop();
  });

  beforeEach(() => {
    pass.connections = 0;
  });

  it('client-node alone opens a connection per request (the behaviour the pool replaces)', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig('plain'));
    const core = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < REQUESTS; i++) await core.listNamespacedPod({ namespace: NS });

    expect(pass.connections).toBe(REQUESTS);
  });

  it('a pooled KubeConfig sends its requests, one after another, over one or two connections', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig('pooled-direct'));
    const core = PooledKubeConfig.from(kc).makeApiClient(CoreV1Api);
    for (let i = 0; i < REQUESTS; i++) await core.listNamespacedPod({ namespace: NS });

    // A request sent as soon as the last answer is read can find its connection not yet back in
    // undici's pool, which then opens a second one; from there the two are reused.
    expect(pass.connections).toBeLessThanOrEqual(2);
    const sent = sim.server.audit.requests.filter((r) => r.by === 'pooled-direct');
    expect(sent.map((r) => r.code)).toEqual(Array<number>(REQUESTS).fill(200));
  });

  it("the gateways of ClusterConnections keep their connections across forCluster calls, each request with the cluster's token", async () => {
    const connections = new ClusterConnections({
      clock: sim.clock,
      clusters: { pooled: { kind: 'kubeconfig', kubeconfig: kubeconfig('medic') } },
    });
    for (let i = 0; i < REQUESTS; i++) {
      const listed = await (await connections.forCluster('pooled')).listRunners(NS);
      expect(listed.ephemeralRunners.map((e) => e.metadata.name)).toEqual(['runner-1']);
    }

    // Each listRunners sends two lists at once (EphemeralRunners and pods): two connections, and
    // at most two more for the release race above.
    expect(pass.connections).toBeLessThanOrEqual(4);
    const sent = sim.server.audit.requests.filter((r) => r.by === 'medic');
    expect(sent).toHaveLength(2 * REQUESTS);
    expect(sent.every((r) => r.code === 200)).toBe(true);
  });
});
