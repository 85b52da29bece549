import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { createServer } from 'node:net';
import { ClusterRequestError } from '../../../functions/adapters/kubernetes/kube-errors.js';
import { KubeClusterGateway } from '../../../functions/adapters/kubernetes/kube-cluster-gateway.js';
import { ClusterUnavailableError } from '../../../functions/ports/cluster-gateway.js';
import type { ApiServer } from '../../../sim/kube/api/api-server.js';
import { kubeconfigYaml, LoopbackProxy, status } from './loopback-proxy.js';
import {
  ER_FINALIZER,
  kubeConfigFor,
  NS,
  REGISTRATION_FINALIZER,
  seedEphemeralRunner,
  seedRunnerPod,
  startSim,
} from './sim-fixture.js';

const BOTH = [ER_FINALIZER, REGISTRATION_FINALIZER];

describe('KubeClusterGateway mutations, guarded by uid, against the Kubernetes API twin', () => {
  let server: ApiServer;
  let proxy: LoopbackProxy;
  let gw: KubeClusterGateway;
  let viaProxy: KubeClusterGateway;
  /** Through the proxy with a short timeout, for the request the proxy never answers. */
  let impatient: KubeClusterGateway;

  beforeAll(async () => {
    ({ server } = await startSim());
    proxy = new LoopbackProxy(server.httpUrl);
    await proxy.start();
    gw = new KubeClusterGateway({ cluster: 'prod', kubeConfig: kubeConfigFor(server) });
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYaml(proxy.url, server.token('runner-medic')));
    // The default timeout (10 s): on a loaded machine a 150 ms one cut ordinary requests short.
    viaProxy = new KubeClusterGateway({ cluster: 'prod', kubeConfig: kc });
    impatient = new KubeClusterGateway({ cluster: 'prod', kubeConfig: kc, requestTimeoutMs: 150 });
  });

  afterAll(async () => {
    await proxy.stop();
    await server.stop();
  });

  beforeEach(() => {
    proxy.intercept = undefined;
    proxy.beforeForward = undefined;
  });

  const uidOf = (resource: string, name: string) =>
    server.api.get(resource, NS, name).metadata.uid as string;
  const mine = (name: string) => server.audit.by('runner-medic').filter((e) => e.name === name);
  /** ARC (or a person) deletes the object and ARC makes a fresh one of the same name. */
  function replaceEphemeralRunner(name: string, finalizers: string[] = []) {
    server.api.modify(
      'arc',
      'ephemeralrunners',
      NS,
      name,
      (o) => void (o.metadata.finalizers = []),
    );
    server.api.delete('arc', 'ephemeralrunners', NS, name);
    return seedEphemeralRunner(server, name, { finalizers });
  }

  describe('deleteEphemeralRunner', () => {
    it('deletes the ER whose uid matches', async () => {
      const er = seedEphemeralRunner(server, 'del-plain');
      expect(await gw.deleteEphemeralRunner(NS, 'del-plain', er.metadata.uid as string)).toBe(
        'done',
      );
      expect(server.api.tryGet('ephemeralrunners', NS, 'del-plain')).toBeUndefined();
      expect(mine('del-plain').map((e) => `${e.verb}:${e.code}`)).toEqual(['delete:200']);
    });

    it('leaves an ER held by its finalizers with a deletionTimestamp', async () => {
      const er = seedEphemeralRunner(server, 'del-held', { finalizers: BOTH });
      expect(await gw.deleteEphemeralRunner(NS, 'del-held', er.metadata.uid as string)).toBe(
        'done',
      );
      const held = server.api.get('ephemeralrunners', NS, 'del-held');
      expect(held.metadata.deletionTimestamp).toBeDefined();
      expect(held.metadata.finalizers).toEqual(BOTH);
    });

    it('answers gone for a stale uid and never touches the fresh ER of the same name', async () => {
      const old = seedEphemeralRunner(server, 'del-stale');
      const fresh = replaceEphemeralRunner('del-stale');
      expect(fresh.metadata.uid).not.toBe(old.metadata.uid);

      expect(await gw.deleteEphemeralRunner(NS, 'del-stale', old.metadata.uid as string)).toBe(
        'gone',
      );
      const now = server.api.get('ephemeralrunners', NS, 'del-stale');
      expect(now.metadata.uid).toBe(fresh.metadata.uid);
      expect(now.metadata.deletionTimestamp).toBeUndefined();
      expect(mine('del-stale').map((e) => `${e.verb}:${e.code}`)).toEqual(['delete:409']);
    });

    it('answers gone when the ER no longer exists', async () => {
      expect(await gw.deleteEphemeralRunner(NS, 'never-was', 'uid-1')).toBe('gone');
      expect(mine('never-was').map((e) => `${e.verb}:${e.code}`)).toEqual(['delete:404']);
    });
  });

  describe('deletePod', () => {
    it('deletes gracefully unless forced: the server keeps the pod for its grace period', async () => {
      seedRunnerPod(server, 'pod-graceful', { nodeName: 'node-1', grace: 45 });
      expect(await gw.deletePod(NS, 'pod-graceful', uidOf('pods', 'pod-graceful'), false)).toBe(
        'done',
      );
      const terminating = server.api.get('pods', NS, 'pod-graceful');
      expect(terminating.metadata.deletionTimestamp).toBeDefined();
      expect(terminating.metadata.deletionGracePeriodSeconds).toBe(45);
    });

    it('force-deletes with grace period 0: the pod is gone at once, even from a node', async () => {
      seedRunnerPod(server, 'pod-forced', { nodeName: 'node-1', grace: 45 });
      expect(await gw.deletePod(NS, 'pod-forced', uidOf('pods', 'pod-forced'), true)).toBe('done');
      expect(server.api.tryGet('pods', NS, 'pod-forced')).toBeUndefined();
      expect(mine('pod-forced').map((e) => `${e.verb}:${e.code}`)).toEqual(['delete:200']);
    });

    it('force also cuts short a pod already terminating', async () => {
      seedRunnerPod(server, 'pod-stuck', { nodeName: 'node-gone', grace: 600 });
      const uid = uidOf('pods', 'pod-stuck');
      expect(await gw.deletePod(NS, 'pod-stuck', uid, false)).toBe('done');
      expect(server.api.get('pods', NS, 'pod-stuck').metadata.deletionGracePeriodSeconds).toBe(600);
      expect(await gw.deletePod(NS, 'pod-stuck', uid, true)).toBe('done');
      expect(server.api.tryGet('pods', NS, 'pod-stuck')).toBeUndefined();
    });

    it('sends the uid precondition always, and gracePeriodSeconds 0 only when forced', async () => {
      seedRunnerPod(server, 'pod-body-a', { nodeName: 'node-1' });
      seedRunnerPod(server, 'pod-body-b', { nodeName: 'node-1' });
      const uidA = uidOf('pods', 'pod-body-a');
      const uidB = uidOf('pods', 'pod-body-b');
      proxy.seen.length = 0;
      await viaProxy.deletePod(NS, 'pod-body-a', uidA, false);
      await viaProxy.deletePod(NS, 'pod-body-b', uidB, true);
      const bodies = proxy.seen
        .filter((r) => r.method === 'DELETE')
        .map((r) => JSON.parse(r.body) as unknown);
      expect(bodies).toEqual([
        { preconditions: { uid: uidA } },
        { preconditions: { uid: uidB }, gracePeriodSeconds: 0 },
      ]);
      expect(proxy.seen.every((r) => !r.url.includes('gracePeriodSeconds'))).toBe(true);
    });

    it('answers gone for a stale uid or a missing pod, leaving the fresh pod alone', async () => {
      seedRunnerPod(server, 'pod-stale', { nodeName: 'node-1' });
      const oldUid = uidOf('pods', 'pod-stale');
      server.api.delete('arc', 'pods', NS, 'pod-stale', { gracePeriodSeconds: 0 });
      seedRunnerPod(server, 'pod-stale', { nodeName: 'node-1' });
      expect(await gw.deletePod(NS, 'pod-stale', oldUid, true)).toBe('gone');
      const fresh = server.api.get('pods', NS, 'pod-stale');
      expect(fresh.metadata.uid).not.toBe(oldUid);
      expect(fresh.metadata.deletionTimestamp).toBeUndefined();
      expect(await gw.deletePod(NS, 'pod-never', 'x', false)).toBe('gone');
    });
  });

  describe('removeFinalizers', () => {
    it('removes only the named finalizers, and the held deletion then completes', async () => {
      const er = seedEphemeralRunner(server, 'fin-ok', { finalizers: BOTH });
      const uid = er.metadata.uid as string;
      await gw.deleteEphemeralRunner(NS, 'fin-ok', uid);

      expect(await gw.removeFinalizers(NS, 'fin-ok', uid, [REGISTRATION_FINALIZER])).toBe('done');
      expect(server.api.get('ephemeralrunners', NS, 'fin-ok').metadata.finalizers).toEqual([
        ER_FINALIZER,
      ]);
      const patches = mine('fin-ok').filter((e) => e.verb === 'patch');
      expect(patches.map((e) => `${e.detail}:${e.code}`)).toEqual(['json:200']);

      expect(await gw.removeFinalizers(NS, 'fin-ok', uid, [ER_FINALIZER])).toBe('done');
      expect(server.api.tryGet('ephemeralrunners', NS, 'fin-ok')).toBeUndefined();
      expect(await gw.removeFinalizers(NS, 'fin-ok', uid, [ER_FINALIZER])).toBe('gone');
    });

    it('is done without a write when none of the finalizers is left', async () => {
      const er = seedEphemeralRunner(server, 'fin-none', { finalizers: [ER_FINALIZER] });
      expect(
        await gw.removeFinalizers(NS, 'fin-none', er.metadata.uid as string, [
          REGISTRATION_FINALIZER,
        ]),
      ).toBe('done');
      expect(mine('fin-none')).toEqual([]);
    });

    it('refuses a stale uid: the fresh ER keeps its finalizers', async () => {
      const old = seedEphemeralRunner(server, 'fin-stale', { finalizers: BOTH });
      replaceEphemeralRunner('fin-stale', BOTH);
      expect(await gw.removeFinalizers(NS, 'fin-stale', old.metadata.uid as string, BOTH)).toBe(
        'gone',
      );
      expect(server.api.get('ephemeralrunners', NS, 'fin-stale').metadata.finalizers).toEqual(BOTH);
      expect(mine('fin-stale')).toEqual([]);
    });

    it('fails safe when the ER is replaced between the read and the patch (test op on uid)', async () => {
      const old = seedEphemeralRunner(server, 'fin-race', { finalizers: BOTH });
      let freshUid = '';
      proxy.beforeForward = (req) => {
        if (req.method !== 'PATCH' || freshUid) return;
        freshUid = replaceEphemeralRunner('fin-race', BOTH).metadata.uid as string;
        expect(JSON.parse(req.body)).toEqual([
          { op: 'test', path: '/metadata/uid', value: old.metadata.uid },
          { op: 'test', path: '/metadata/finalizers', value: BOTH },
          { op: 'remove', path: '/metadata/finalizers' },
        ]);
      };
      expect(
        await viaProxy.removeFinalizers(NS, 'fin-race', old.metadata.uid as string, BOTH),
      ).toBe('gone');
      const now = server.api.get('ephemeralrunners', NS, 'fin-race');
      expect(now.metadata.uid).toBe(freshUid);
      expect(now.metadata.finalizers).toEqual(BOTH);
      expect(mine('fin-race').map((e) => `${e.verb}:${e.code}`)).toEqual(['patch:422']);
    });

    it('re-reads and retries when ARC changed the finalizer list meanwhile', async () => {
      const er = seedEphemeralRunner(server, 'fin-moved', {
        finalizers: [...BOTH, 'example.com/keep'],
      });
      let moved = false;
      proxy.beforeForward = (req) => {
        if (req.method !== 'PATCH' || moved) return;
        moved = true;
        server.api.modify('arc', 'ephemeralrunners', NS, 'fin-moved', (o) => {
          o.metadata.finalizers = [ER_FINALIZER, 'example.com/keep'];
        });
      };
      expect(
        await viaProxy.removeFinalizers(NS, 'fin-moved', er.metadata.uid as string, BOTH),
      ).toBe('done');
      expect(server.api.get('ephemeralrunners', NS, 'fin-moved').metadata.finalizers).toEqual([
        'example.com/keep',
      ]);
      expect(mine('fin-moved').map((e) => `${e.verb}:${e.code}`)).toEqual([
        'patch:422',
        'patch:200',
      ]);
    });

    it('does not retry a patch refused while nothing changed (422 for another reason)', async () => {
      const er = seedEphemeralRunner(server, 'fin-refused', { finalizers: BOTH });
      let patches = 0;
      proxy.intercept = (req) => {
        if (req.method !== 'PATCH') return undefined;
        patches++;
        return status(422, 'Invalid', 'admission webhook denied the request');
      };
      const err = await viaProxy
        .removeFinalizers(NS, 'fin-refused', er.metadata.uid as string, BOTH)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterRequestError);
      expect((err as ClusterRequestError).code).toBe(422);
      expect(patches).toBe(1);
      expect(server.api.get('ephemeralrunners', NS, 'fin-refused').metadata.finalizers).toEqual(
        BOTH,
      );
    });

    it('gives up as unavailable after three races in a row', async () => {
      const er = seedEphemeralRunner(server, 'fin-churn', { finalizers: BOTH });
      let n = 0;
      proxy.beforeForward = (req) => {
        if (req.method !== 'PATCH') return;
        n++;
        server.api.modify('arc', 'ephemeralrunners', NS, 'fin-churn', (o) => {
          o.metadata.finalizers = [...BOTH, `example.com/churn-${n}`];
        });
      };
      const err = await viaProxy
        .removeFinalizers(NS, 'fin-churn', er.metadata.uid as string, BOTH)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterUnavailableError);
      expect((err as Error).message).toMatch(/kept changing/);
      expect(mine('fin-churn').map((e) => `${e.verb}:${e.code}`)).toEqual([
        'patch:422',
        'patch:422',
        'patch:422',
      ]);
      expect(server.api.get('ephemeralrunners', NS, 'fin-churn').metadata.finalizers).toEqual([
        ...BOTH,
        'example.com/churn-3',
      ]);
    });
  });

  describe('failures', () => {
    it('turns a 500 into ClusterUnavailableError, with the ApiException as cause', async () => {
      proxy.intercept = () => status(500, 'InternalError', 'etcdserver: request timed out');
      const err = await viaProxy.listRunners(NS).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterUnavailableError);
      expect((err as Error).message).toMatch(/list .* on cluster prod failed with HTTP 500/);
      expect((err as Error).cause).toBeInstanceOf(ApiException);
      expect(((err as Error).cause as ApiException<unknown>).code).toBe(500);
    });

    it('treats 429 and 503 on mutations as unavailable, not as gone', async () => {
      proxy.intercept = (req) =>
        req.method === 'DELETE' ? status(429, 'TooManyRequests', 'slow down') : undefined;
      await expect(viaProxy.deleteEphemeralRunner(NS, 'x', 'u')).rejects.toBeInstanceOf(
        ClusterUnavailableError,
      );
      proxy.intercept = () => status(503, 'ServiceUnavailable', 'down');
      await expect(viaProxy.deletePod(NS, 'x', 'u', true)).rejects.toBeInstanceOf(
        ClusterUnavailableError,
      );
      await expect(viaProxy.getPod(NS, 'x')).rejects.toBeInstanceOf(ClusterUnavailableError);
      await expect(viaProxy.removeFinalizers(NS, 'x', 'u', BOTH)).rejects.toBeInstanceOf(
        ClusterUnavailableError,
      );
    });

    it('turns a refused connection and a timeout into ClusterUnavailableError', async () => {
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as { port: number }).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfigYaml(`https://127.0.0.1:${port}`, 't'));
      const dead = new KubeClusterGateway({ cluster: 'dead', kubeConfig: kc });
      const err = await dead.listNodes().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterUnavailableError);
      expect((err as Error).message).toMatch(/ECONNREFUSED|fetch failed/);

      proxy.intercept = () => 'hang';
      const slow = await impatient.getEphemeralRunner(NS, 'x').catch((e: unknown) => e);
      expect(slow).toBeInstanceOf(ClusterUnavailableError);
      expect((slow as Error).message).toMatch(/abort|timeout/i);
    });

    it('keeps refusals (401, 403) apart from outages, and reports a 401', async () => {
      let unauthorized = 0;
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfigYaml(proxy.url, 'not-a-token'));
      const stranger = new KubeClusterGateway({
        cluster: 'prod',
        kubeConfig: kc,
        onUnauthorized: () => unauthorized++,
      });
      const err = await stranger.listNodes().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterRequestError);
      expect(err).not.toBeInstanceOf(ClusterUnavailableError);
      expect((err as ClusterRequestError).code).toBe(401);
      expect(unauthorized).toBe(1);

      proxy.intercept = () => status(403, 'Forbidden', 'ephemeralrunners is forbidden');
      const forbidden = await viaProxy.deleteEphemeralRunner(NS, 'x', 'u').catch((e: unknown) => e);
      expect((forbidden as ClusterRequestError).code).toBe(403);
    });
  });
});
