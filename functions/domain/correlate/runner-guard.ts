import type { EphemeralRunner, ObjectMeta, OwnerReference, Pod } from '../model/cluster-facts.js';

const ARC_RUNNER_LABEL = 'actions-ephemeral-runner';
const COMPONENT_LABEL = 'app.kubernetes.io/component';
const SCALE_SET_NAME_LABEL = 'actions.github.com/scale-set-name';
const ARC_VERSION_LABEL = 'app.kubernetes.io/version';
const ARC_API_GROUP = 'actions.github.com';

type Labelled = Pick<ObjectMeta, 'labels' | 'ownerReferences'>;

/** The object's controller, when it is an ARC object of this kind (ARC sets `controller: true`). */
const ownedBy = (refs: OwnerReference[], kind: string): OwnerReference | undefined =>
  refs.find((r) => r.controller && r.kind === kind && r.apiVersion.startsWith(`${ARC_API_GROUP}/`));

/**
 * The shape of a runner pod: ARC's three runner labels AND a controller ownerReference to an
 * EphemeralRunner of the same name. Necessary, never sufficient: anyone can create such a pod in
 * any namespace. `isArcRunnerPod` proves it against the live EphemeralRunner.
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

/**
 * A pod is ARC's runner only when its controller ownerReference names the live EphemeralRunner
 * `er` by uid, in the same cluster and namespace, and that EphemeralRunner is itself ARC's (its
 * controller is an EphemeralRunnerSet) for the same scale set. ARC sets these references with
 * controllerutil.SetControllerReference (controllers/actions.github.com/ephemeralrunner_controller.go).
 */
export function isArcRunnerPod(
  pod: Pick<Pod, 'cluster' | 'metadata'>,
  er: EphemeralRunner,
): boolean {
  const owner = ownedBy(pod.metadata.ownerReferences, 'EphemeralRunner');
  return (
    isRunnerPod(pod.metadata) &&
    owner !== undefined &&
    owner.uid !== '' &&
    owner.uid === er.metadata.uid &&
    pod.cluster === er.cluster &&
    pod.metadata.namespace === er.metadata.namespace &&
    pod.metadata.name === er.metadata.name &&
    isArcOwned(er.metadata) &&
    scaleSetOf(pod.metadata) === scaleSetOf(er.metadata)
  );
}

/**
 * Whether what runner-medic sees of a runner proves it ARC's: its EphemeralRunner, when present,
 * is ARC's; its pod, when present, is controlled by that very EphemeralRunner. A pod without its
 * EphemeralRunner proves nothing (a look-alike in another namespace has none).
 */
export function isProvenArcRunner(v: { pod: Pod | null; er: EphemeralRunner | null }): boolean {
  if (v.er && !isArcOwned(v.er.metadata)) return false;
  if (!v.pod) return true;
  return v.er !== null && isArcRunnerPod(v.pod, v.er);
}

/**
 * Whether what runner-medic sees contradicts an ARC runner: an EphemeralRunner that is not ARC's,
 * or a pod that its namesake EphemeralRunner does not control. Weaker than proof: a pod whose
 * EphemeralRunner was not read is not contradicted (for a re-run, GitHub's own annotation is the
 * evidence of the loss).
 */
export function contradictsArcRunner(v: { pod: Pod | null; er: EphemeralRunner | null }): boolean {
  if (v.er && !isArcOwned(v.er.metadata)) return true;
  return v.pod !== null && v.er !== null && !isArcRunnerPod(v.pod, v.er);
}

export const scaleSetOf = (meta: Pick<ObjectMeta, 'labels'>): string | null =>
  meta.labels[SCALE_SET_NAME_LABEL] ?? null;

/** ARC's chart version from `app.kubernetes.io/version`, e.g. `0.8.2`. */
export function arcVersionOf(meta: Pick<ObjectMeta, 'labels'>): [number, number, number] | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(meta.labels[ARC_VERSION_LABEL] ?? '');
  if (!m) return null;
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}
