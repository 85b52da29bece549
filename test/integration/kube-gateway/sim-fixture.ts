import { KubeConfig } from '@kubernetes/client-node';
import { SimClock } from '../../../sim/clock.js';
import { Rng } from '../../../sim/rng.js';
import { ApiServer } from '../../../sim/kube/api/api-server.js';
import type { SchemaFlavour } from '../../../sim/kube/api/validation.js';
import type { EphemeralRunnerStatus, KubeObject } from '../../../sim/kube/types.js';

export const NS = 'arc-runners';
export const ER_FINALIZER = 'ephemeralrunner.actions.github.com/finalizer';
export const REGISTRATION_FINALIZER =
  'ephemeralrunner.actions.github.com/runner-registration-finalizer';

const ARC_LABELS = {
  'app.kubernetes.io/component': 'runner',
  'app.kubernetes.io/part-of': 'gha-runner-scale-set',
  'actions.github.com/scale-set-name': 'arc-runner-set',
  'actions.github.com/scale-set-namespace': NS,
};

/** One Kubernetes API twin on 127.0.0.1 with the runner namespace created. */
export async function startSim(
  options: { clusterName?: string; flavour?: SchemaFlavour; seed?: number } = {},
): Promise<{ server: ApiServer; clock: SimClock }> {
  const clock = new SimClock();
  const server = new ApiServer({
    clock,
    rng: new Rng(options.seed ?? 11),
    clusterName: options.clusterName ?? 'sim',
    schemaFlavour: options.flavour ?? '0.13',
  });
  await server.start();
  server.api.create('admin', 'namespaces', undefined, { metadata: { name: NS } });
  server.api.create('admin', 'namespaces', undefined, { metadata: { name: 'other' } });
  return { server, clock };
}

export function kubeConfigFor(server: ApiServer, actor = 'runner-medic'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig(actor));
  return kc;
}

/** An EphemeralRunner as ARC creates it, with an optional status written by the controller. */
export function seedEphemeralRunner(
  server: ApiServer,
  name: string,
  options: { status?: EphemeralRunnerStatus; finalizers?: string[]; namespace?: string } = {},
): KubeObject {
  const namespace = options.namespace ?? NS;
  const er = server.api.create('arc', 'ephemeralrunners', namespace, {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunner',
    metadata: { name, namespace, labels: ARC_LABELS, finalizers: options.finalizers ?? [] },
    spec: {
      githubConfigUrl: 'https://github.com/acme',
      githubConfigSecret: 'github-config',
      runnerScaleSetId: 1,
      spec: { containers: [{ name: 'runner', image: 'ghcr.io/actions/actions-runner:latest' }] },
    },
  });
  const status = options.status;
  if (!status) return er;
  return (
    server.api.modify('arc', 'ephemeralrunners', namespace, name, (o) => void (o.status = status), {
      subresource: 'status',
    }) ?? er
  );
}

/** The runner pod of an EphemeralRunner, optionally bound to a node and Running. */
export function seedRunnerPod(
  server: ApiServer,
  name: string,
  options: {
    nodeName?: string;
    owner?: KubeObject;
    labels?: Record<string, string>;
    grace?: number;
  } = {},
): KubeObject {
  const owner = options.owner;
  server.api.create('arc', 'pods', NS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: options.labels ?? { ...ARC_LABELS, 'actions-ephemeral-runner': 'True' },
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'actions.github.com/v1alpha1',
                kind: 'EphemeralRunner',
                name: owner.metadata.name as string,
                uid: owner.metadata.uid as string,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      restartPolicy: 'Never',
      ...(options.grace !== undefined ? { terminationGracePeriodSeconds: options.grace } : {}),
      containers: [{ name: 'runner', image: 'ghcr.io/actions/actions-runner:latest' }],
    },
  });
  const nodeName = options.nodeName;
  if (nodeName) {
    server.api.modify(
      'scheduler',
      'pods',
      NS,
      name,
      (p) => void ((p.spec as { nodeName?: string }).nodeName = nodeName),
    );
    server.api.modify(
      'kubelet',
      'pods',
      NS,
      name,
      (p) => void ((p.status as { phase: string }).phase = 'Running'),
      {
        subresource: 'status',
      },
    );
  }
  return server.api.get('pods', NS, name);
}
