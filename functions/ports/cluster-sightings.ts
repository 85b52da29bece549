/** When exporter events last came from a cluster name, configured or not. */
export interface ClusterSighting {
  cluster: string;
  /** Whether the name was in CLUSTERS when the event came (events of others are rejected). */
  configured: boolean;
  /** Epoch ms of the newest event noted. */
  lastEventAt: number;
}

/**
 * What the engine remembers of the cluster names on exporter events, for the doctor: clusters
 * that send events but are not configured, and configured clusters whose exporter went silent.
 */
export interface ClusterSightings {
  /** Notes events from `cluster` up to `at`; an older time never replaces a newer one. */
  noteEvent(cluster: string, configured: boolean, at: number, now: number): Promise<void>;
  /** Every cluster name noted, newest first. */
  sightings(now: number): Promise<ClusterSighting[]>;
}
