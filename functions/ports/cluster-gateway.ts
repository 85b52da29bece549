import type { EphemeralRunner, Node, Pod } from '../domain/model/cluster-facts.js';
import { RunnerMedicError } from './errors.js';

/** A Kubernetes call failed in a way worth retrying (network, 5xx, 429). */
export class ClusterUnavailableError extends RunnerMedicError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('unavailable', message, options);
    this.name = 'ClusterUnavailableError';
  }
}

/** What a mutating call did. `gone`: already absent (404) or a different uid now (409 precondition). */
export type ClusterMutation = 'done' | 'gone';

/** The runners of one namespace as the API shows them now, for level checks. */
export interface RunnerListing {
  ephemeralRunners: EphemeralRunner[];
  /** Only pods with ARC's runner labels. */
  pods: Pod[];
}

/** One page of a namespace's runners; `next` continues the listing (Kubernetes `continue`). */
interface RunnerPage extends RunnerListing {
  next: string | null;
}

/** A followed list: its objects by `namespace/name`, true at `resourceVersion` (null: unlisted). */
export interface FollowedObjects<T> {
  objects: Map<string, T>;
  resourceVersion: string | null;
}

/** The runners of one scope (a namespace, or the whole cluster) as followed by list and watch. */
export interface FollowedRunners {
  ephemeralRunners: FollowedObjects<EphemeralRunner>;
  /** Only pods with ARC's runner labels. */
  pods: FollowedObjects<Pod>;
}

/**
 * What bringing a followed list up to date did: `listed` (listed in full: no cursor, or the
 * cursor could not be resumed) or watched, with the `namespace/name` keys of the objects that
 * changed (`/name` for a cluster-scoped object).
 */
export interface FollowChanges {
  listed: boolean;
  changed: Set<string>;
}

/**
 * runner-medic's view of one Kubernetes cluster. Reads return parsed domain types; every
 * mutation is guarded by a uid precondition so a fresh object of the same name is never hit.
 */
export interface ClusterGateway {
  readonly cluster: string;
  /** Runners of one namespace, or of every namespace when none is given. */
  listRunners(namespace?: string): Promise<RunnerListing>;
  /** One page of a namespace's EphemeralRunners and runner pods (`limit`/`continue`). */
  listRunnersPage(namespace: string, next: string | null, limit: number): Promise<RunnerPage>;
  /**
   * Brings `state` (the runners of one namespace, or of every namespace when null) up to date:
   * a short watch from its resourceVersions, or a full list when there are none or they cannot
   * be resumed (410 Gone, a cut that does not resume). No change is ever skipped.
   */
  followRunners(namespace: string | null, state: FollowedRunners): Promise<FollowChanges>;
  /** Brings the cluster's nodes up to date as `followRunners` does a scope's runners. */
  followNodes(state: FollowedObjects<Node>): Promise<FollowChanges>;
  listNodes(): Promise<Node[]>;
  getNode(name: string): Promise<Node | null>;
  /**
   * One EphemeralRunner of a scale set (label selector, `limit=1`), in the given namespaces or in
   * every namespace: where a scale set lives, when the engine has not seen it yet.
   */
  findRunnerOfScaleSet(
    scaleSet: string,
    namespaces?: readonly string[],
  ): Promise<EphemeralRunner | null>;
  /**
   * The runner pods on one node (`fieldSelector=spec.nodeName=…` plus ARC's runner labels), in
   * the given namespaces, or in every namespace when none is given.
   */
  listRunnerPodsOnNode(nodeName: string, namespaces?: readonly string[]): Promise<Pod[]>;
  getEphemeralRunner(namespace: string, name: string): Promise<EphemeralRunner | null>;
  getPod(namespace: string, name: string): Promise<Pod | null>;
  deleteEphemeralRunner(namespace: string, name: string, uid: string): Promise<ClusterMutation>;
  /** `force`: grace period 0, for a pod whose node is gone or NotReady. */
  deletePod(namespace: string, name: string, uid: string, force: boolean): Promise<ClusterMutation>;
  /** Removes the named finalizers from an EphemeralRunner (JSON patch guarded by uid). */
  removeFinalizers(
    namespace: string,
    name: string,
    uid: string,
    finalizers: readonly string[],
  ): Promise<ClusterMutation>;
}

/** Finds the gateway for a cluster name as events carry it (`clusterName`). */
export interface ClusterGateways {
  clusters(): string[];
  /**
   * The runner namespaces configured for a cluster; null when none are configured and the
   * cluster may be listed across all namespaces.
   */
  namespaces(cluster: string): readonly string[] | null;
  forCluster(cluster: string): Promise<ClusterGateway>;
}
