/** ARC's object shapes: labels, annotations, owner references and pod template (resourcebuilder.go). */
import { ARC_API_VERSION } from '../api/resources.js';
import type {
  AutoscalingRunnerSet,
  EphemeralRunner,
  EphemeralRunnerSet,
  KubeObject,
  OwnerReference,
  Pod,
} from '../types.js';
import {
  ARC_FINALIZER,
  ARC_REGISTRATION_FINALIZER,
  ERS_FINALIZER,
  type ArcBehaviour,
} from './arc-version.js';

const LABEL_SCALE_SET_NAME = 'actions.github.com/scale-set-name';
const LABEL_SCALE_SET_NAMESPACE = 'actions.github.com/scale-set-namespace';
const LABEL_COMPONENT = 'app.kubernetes.io/component';
export const ANNOTATION_SCALE_SET_ID = 'runner-scale-set-id';
export const ANNOTATION_PATCH_ID = 'actions.github.com/patch-id';

export function controllerRef(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name as string,
    uid: owner.metadata.uid as string,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** `https://github.com/acme` → organization acme; `https://github.com/acme/app` → repository. */
function configUrlLabels(url: string): Record<string, string> {
  const parts = new URL(url).pathname.split('/').filter(Boolean);
  const trim = (s: string) => s.slice(0, 63).replace(/[^A-Za-z0-9]+$/, '');
  if (parts[0] === 'enterprises' && parts[1])
    return { 'actions.github.com/enterprise': trim(parts[1]) };
  const out: Record<string, string> = {};
  if (parts[0]) out['actions.github.com/organization'] = trim(parts[0]);
  if (parts[1]) out['actions.github.com/repository'] = trim(parts[1]);
  return out;
}

export function scaleSetOwner(url: string): string {
  const parts = new URL(url).pathname.split('/').filter(Boolean);
  return parts.slice(parts[0] === 'enterprises' ? 1 : 0, 2).join('/');
}

export function newEphemeralRunnerSet(
  ars: AutoscalingRunnerSet,
  scaleSetId: number,
  arc: ArcBehaviour,
): EphemeralRunnerSet {
  const name = ars.metadata.name as string;
  const labels: Record<string, string> = {
    ...(ars.metadata.labels ?? {}),
    'app.kubernetes.io/part-of': 'gha-runner-scale-set',
    [LABEL_COMPONENT]: 'runner-set',
    'app.kubernetes.io/version': arc.chartVersion,
    [LABEL_SCALE_SET_NAME]: name,
    [LABEL_SCALE_SET_NAMESPACE]: ars.metadata.namespace as string,
    ...configUrlLabels(ars.spec.githubConfigUrl),
  };
  return {
    apiVersion: ARC_API_VERSION,
    kind: 'EphemeralRunnerSet',
    metadata: {
      generateName: `${name}-`,
      namespace: ars.metadata.namespace,
      labels,
      annotations: {
        'actions.github.com/runner-group-name': ars.spec.runnerGroup ?? 'Default',
        'actions.github.com/runner-scale-set-name': ars.spec.runnerScaleSetName ?? name,
        'actions.github.com/runner-spec-hash': 'sim',
      },
      ownerReferences: [controllerRef(ars)],
      finalizers: [ERS_FINALIZER],
    },
    spec: {
      replicas: 0,
      patchID: 0,
      ephemeralRunnerSpec: {
        githubConfigUrl: ars.spec.githubConfigUrl,
        githubConfigSecret: ars.spec.githubConfigSecret,
        runnerScaleSetId: scaleSetId,
        metadata: {
          labels: { ...(ars.spec.template.metadata?.labels ?? {}) },
          annotations: { ...(ars.spec.template.metadata?.annotations ?? {}) },
        },
        spec: structuredClone(ars.spec.template.spec),
      },
    },
  };
}

export function newEphemeralRunner(ers: EphemeralRunnerSet, arc: ArcBehaviour): EphemeralRunner {
  return {
    apiVersion: ARC_API_VERSION,
    kind: 'EphemeralRunner',
    metadata: {
      generateName: `${ers.metadata.name}-runner-`,
      namespace: ers.metadata.namespace,
      labels: { ...(ers.metadata.labels ?? {}), [LABEL_COMPONENT]: 'runner' },
      annotations: {
        ...(ers.metadata.annotations ?? {}),
        [ANNOTATION_PATCH_ID]: String(ers.spec.patchID),
      },
      ownerReferences: [controllerRef(ers)],
      ...(arc.finalizersAtCreation
        ? { finalizers: [ARC_FINALIZER, ARC_REGISTRATION_FINALIZER] }
        : {}),
    },
    spec: structuredClone(ers.spec.ephemeralRunnerSpec),
  };
}

export function newRunnerPod(er: EphemeralRunner, arc: ArcBehaviour): Pod {
  const name = er.metadata.name as string;
  const spec = structuredClone(er.spec.spec);
  spec.restartPolicy ??= 'Never';
  for (const c of spec.containers) {
    if (c.name !== 'runner') continue;
    const env = (c.env ??= []).filter(
      (e) =>
        e.name !== 'ACTIONS_RUNNER_INPUT_JITCONFIG' &&
        e.name !== 'GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT',
    );
    env.push({
      name: 'ACTIONS_RUNNER_INPUT_JITCONFIG',
      valueFrom: { secretKeyRef: { name, key: 'jitToken' } },
    });
    env.push({
      name: 'GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT',
      value: `actions-runner-controller/${arc.chartVersion}`,
    });
    c.env = env;
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: er.metadata.namespace,
      labels: {
        ...(er.metadata.labels ?? {}),
        ...(er.spec.metadata?.labels ?? {}),
        'actions-ephemeral-runner': 'True',
        'pod-template-hash': '7484468bf7',
      },
      annotations: { ...(er.metadata.annotations ?? {}), ...(er.spec.metadata?.annotations ?? {}) },
      ownerReferences: [controllerRef(er)],
    },
    spec,
  };
}

export function defaultRunnerTemplate(): AutoscalingRunnerSet['spec']['template'] {
  return {
    spec: {
      containers: [
        {
          name: 'runner',
          image: 'ghcr.io/actions/actions-runner:latest',
          command: ['/home/runner/run.sh'],
        },
      ],
      restartPolicy: 'Never',
    },
  };
}
