/**
 * The set-up the API server twin's tests share: a started server with the runner namespace,
 * runner-medic's clients over its kubeconfig, and the helpers that read its Status errors.
 */
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { ApiServer } from '../../../sim/kube/api/api-server.js';
import { SimClock } from '../../../sim/clock.js';
import { Rng } from '../../../sim/rng.js';

export const NS = 'arc-runners';

/** Where EphemeralRunners of the runner namespace live, for the custom objects client. */
export const ERS = {
  group: 'actions.github.com',
  version: 'v1alpha1',
  namespace: NS,
  plural: 'ephemeralrunners',
};

export function erBody(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunner',
    metadata: { name, namespace: NS, labels: { 'app.kubernetes.io/component': 'runner' } },
    spec: {
      githubConfigUrl: 'https://github.com/acme',
      githubConfigSecret: 'github-config',
      runnerScaleSetId: 1,
      spec: { containers: [{ name: 'runner', image: 'ghcr.io/actions/actions-runner:latest' }] },
    },
    ...extra,
  };
}

/** Awaits a call that must fail with `code` and a Kubernetes Status body; returns the body. */
export async function expectApiError(
  p: Promise<unknown>,
  code: number,
): Promise<{ reason?: string; message?: string; details?: { causes?: { field?: string }[] } }> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiException);
    const err = e as ApiException<unknown>;
    expect(err.code).toBe(code);
    const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    expect(body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code });
    return body;
  }
  throw new Error(`expected HTTP ${code}`);
}

export interface ApiServerTwin {
  clock: SimClock;
  server: ApiServer;
  /** runner-medic's kubeconfig, and its clients. */
  kc: KubeConfig;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  /** A raw HTTP request as runner-medic, for what the clients will not send. */
  call(
    method: string,
    path: string,
    body?: string,
    contentType?: string,
  ): Promise<{ status: number; body: { kind?: string; reason?: string; code?: number } }>;
}

/** A fresh server for each test of the calling file (started before, stopped after). */
export function useApiServer(): ApiServerTwin {
  const twin = {} as ApiServerTwin;
  beforeEach(async () => {
    const clock = new SimClock();
    const server = new ApiServer({
      clock,
      rng: new Rng(7),
      clusterName: 'sim',
      schemaFlavour: '0.13',
      bookmarkIntervalMs: 50,
    });
    await server.start();
    server.api.create('admin', 'namespaces', undefined, { metadata: { name: NS } });
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig('runner-medic'));
    const token = server.token('runner-medic');
    Object.assign(twin, {
      clock,
      server,
      kc,
      core: kc.makeApiClient(CoreV1Api),
      custom: kc.makeApiClient(CustomObjectsApi),
      call: async (
        method: string,
        path: string,
        body?: string,
        contentType = 'application/json',
      ) => {
        const res = await fetch(`${server.httpUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
          body,
        });
        return { status: res.status, body: await res.json() };
      },
    });
  });
  afterEach(() => twin.server.stop());
  return twin;
}
