import type { CheckResult } from './doctor-check.js';
import { failed } from './doctor-check.js';

/**
 * The Events checks need the facts store to remember, per cluster name, when an event last came
 * from it, including names that are not configured (the engine rejects those without storing
 * them). The store (functions/ports/facts-store.ts) keeps no such record yet, so both checks say
 * plainly that they are not available rather than guess.
 */
export function checkEvents(minutes: number): CheckResult[] {
  const what =
    'Until the store records events per cluster, look at the InputRejected metric (unknown clusters) and the exporter’s own logs.';
  return [
    failed(
      'events.unknown-clusters',
      'Not available: the store does not record the cluster names of rejected events, so clusters that send events but are not in CLUSTERS cannot be listed.',
      what,
    ),
    failed(
      'events.exporter-silent',
      `Not available: the store does not record when each cluster's exporter last sent an event, so an exporter silent for ${minutes} minutes cannot be detected.`,
      what,
    ),
  ];
}
