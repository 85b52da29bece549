import type { ClusterSightings } from '../ports/cluster-sightings.js';
import type { CheckResult } from './doctor-check.js';
import { describeError, failed, finding, listed, ok, unreachable } from './doctor-check.js';

/** Events from an unconfigured cluster this recent are reported. */
const UNKNOWN_WINDOW_MS = 24 * 3600_000;

const ago = (now: number, at: number) => {
  const minutes = Math.round((now - at) / 60_000);
  return minutes < 120 ? `${minutes} min ago` : `${Math.round(minutes / 60)} h ago`;
};

export interface EventsCheckInput {
  /** The store's record of exporter events per cluster; null when the store is not configured. */
  sightings: ClusterSightings | null;
  /** The cluster names in CLUSTERS. */
  configured: readonly string[];
  now: number;
  /** A configured cluster with no exporter event for this long is a finding. */
  silentMinutes: number;
}

/**
 * The Events checks, from what the engine notes as exporter events arrive (record-trigger.ts
 * noteSightings): clusters named in recent events but not configured (the engine rejects their
 * events, so their runners are never rescued), and configured clusters whose exporter sent
 * nothing for `silentMinutes` (the engine then learns of a loss only at the next sweep).
 */
export async function checkEvents(input: EventsCheckInput): Promise<CheckResult[]> {
  const { now, silentMinutes } = input;
  if (!input.sightings) {
    const why = 'Not checked: TABLE_NAME is not set, so the store that notes events is unknown.';
    const what = 'Set TABLE_NAME (or use --stage) as the functions have it.';
    return [
      failed('events.unknown-clusters', why, what),
      failed('events.exporter-silent', why, what),
    ];
  }
  let seen;
  try {
    seen = await input.sightings.sightings(now);
  } catch (error) {
    const why = `Cannot read the store's record of events: ${describeError(error)}.`;
    const what = 'Check TABLE_NAME, the AWS credentials and region (or DYNAMODB_ENDPOINT).';
    return [
      unreachable('events.unknown-clusters', why, what),
      unreachable('events.exporter-silent', why, what),
    ];
  }
  const strangers = seen.filter(
    (s) => !input.configured.includes(s.cluster) && s.lastEventAt >= now - UNKNOWN_WINDOW_MS,
  );
  const unknown =
    strangers.length > 0
      ? finding(
          'events.unknown-clusters',
          `Exporter events arrive from clusters not in CLUSTERS: ${listed(
            strangers.map((s) => `${s.cluster} (last ${ago(now, s.lastEventAt)})`),
          )}. The engine rejects them (metric InputRejected), so those clusters' runners are never rescued.`,
          'Add each cluster to CLUSTERS with its access, or correct the cluster name its exporter sends (clusterName in its route).',
        )
      : ok(
          'events.unknown-clusters',
          'Every cluster named in the last day’s exporter events is configured.',
        );

  const silentSince = now - silentMinutes * 60_000;
  const silent = input.configured.flatMap((cluster) => {
    const last = seen.find((s) => s.cluster === cluster)?.lastEventAt;
    if (last !== undefined && last >= silentSince) return [];
    return [`${cluster} (${last === undefined ? 'never' : `last ${ago(now, last)}`})`];
  });
  const exporter =
    silent.length > 0
      ? finding(
          'events.exporter-silent',
          `No exporter event in the last ${silentMinutes} minutes from: ${listed(silent)}. Without events runner-medic learns of a lost runner only at the next sweep, minutes later.`,
          'Check the exporter in each cluster (kubernetes-event-exporter pods and logs), its EventBridge route and the bus rule; a quiet cluster with no runner activity also sends nothing.',
        )
      : ok(
          'events.exporter-silent',
          `Every configured cluster sent exporter events in the last ${silentMinutes} minutes.`,
        );
  return [unknown, exporter];
}
