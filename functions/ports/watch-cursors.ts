/**
 * Where the sweep resumes following a cluster's runners: the resourceVersion of each followed
 * list (per scope: a runner namespace, or `*` for the whole cluster) and when the cluster was
 * last listed in full. One cursor per cluster.
 */
export interface WatchCursor {
  /** scope → list name (`ephemeralrunners`, `pods`) → the resourceVersion to watch from. */
  scopes: Record<string, Record<string, string>>;
  /** Epoch ms of the last full list of every scope (the slow relist cadence counts from it). */
  listedAt: number;
  /** Namespaces that changed and are not decided yet (a sweep cut short decides them next). */
  pending: string[];
}

export interface WatchCursors {
  read(cluster: string, now: number): Promise<WatchCursor | null>;
  write(cluster: string, cursor: WatchCursor, now: number): Promise<void>;
}
