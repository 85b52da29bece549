import type { ObjectMeta, OwnerReference } from './cluster-facts.js';

export const ARC_RUNNER_LABEL = 'actions-ephemeral-runner';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';
export const SCALE_SET_NAME_LABEL = 'actions.github.com/scale-set-name';
export const SCALE_SET_NAMESPACE_LABEL = 'actions.github.com/scale-set-namespace';
export const ARC_VERSION_LABEL = 'app.kubernetes.io/version';
export const ARC_API_GROUP = 'actions.github.com';

type Labelled = Pick<ObjectMeta, 'labels' | 'ownerReferences'>;

const ownedBy = (refs: OwnerReference[], kind: string): OwnerReference | undefined =>
  refs.find((r) => r.kind === kind && r.apiVersion.startsWith(`${ARC_API_GROUP}/`));

/**
 * A runner pod that runner-medic may ever act on: ARC's three runner labels AND an
 * ownerReference to an EphemeralRunner of the same name. Anything else is never a target.
 */
export function isRunnerPod(meta: Labelled & { name: string }): boolean {
  const l = meta.labels;
  const owner = ownedBy(meta.ownerReferences, 'EphemeralRunner');
  return (
    l[ARC_RUNNER_LABEL] === 'True' &&
    l[COMPONENT_LABEL] === 'runner' &&
    Boolean(l[SCALE_SET_NAME_LABEL]) &&
    owner !== undefined &&
    owner.name === meta.name
  );
}

/** An EphemeralRunner made by ARC: runner component and scale-set labels, owned by an ERS. */
export function isArcOwned(meta: Labelled): boolean {
  return (
    meta.labels[COMPONENT_LABEL] === 'runner' &&
    Boolean(meta.labels[SCALE_SET_NAME_LABEL]) &&
    ownedBy(meta.ownerReferences, 'EphemeralRunnerSet') !== undefined
  );
}

export const scaleSetOf = (meta: Pick<ObjectMeta, 'labels'>): string | null =>
  meta.labels[SCALE_SET_NAME_LABEL] ?? null;

/** ARC's chart version from `app.kubernetes.io/version`, e.g. `0.8.2`. */
export function arcVersionOf(meta: Pick<ObjectMeta, 'labels'>): [number, number, number] | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(meta.labels[ARC_VERSION_LABEL] ?? '');
  if (!m) return null;
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}
