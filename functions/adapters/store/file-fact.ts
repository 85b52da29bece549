import { erJobCacheOf } from '../../domain/correlate/job-records.js';
import type * as Fact from '../../domain/model/facts.js';
import type { Loss, RunnerWarning } from '../../domain/model/loss.js';
import type { RunnerRef, StoredFacts } from '../../ports/facts-store.js';

/** Facts kept in a runner's partition: where each goes in a slice, and the runner it names. */
const RUNNER_FACTS = {
  loss: { into: 'losses', runnerOf: (d: Loss) => d.runnerName },
  runnerWarning: { into: 'runnerWarnings', runnerOf: (d: RunnerWarning) => d.runnerName },
  erJob: { into: 'erJobCache', runnerOf: (d: Fact.ErJobCacheEntry) => d.runnerName },
  missingPod: { into: 'missingPods', runnerOf: (d: Fact.MissingPod) => d.name },
} as const;

/** Facts of other partitions: where each goes in a slice. */
const OTHER_FACTS = {
  job: 'jobs',
  run: 'runs',
  nodeSignal: 'nodeSignals',
  registration: 'registrations',
  action: 'actions',
} as const;

/**
 * Files one stored fact of `type` into a slice, as both stores read it; false when it is not one
 * (a runner's record on its node is filed as its job cache, and stays unfiled as a placement).
 */
export function fileFact(
  facts: StoredFacts,
  runners: RunnerRef[],
  type: string,
  data: unknown,
): boolean {
  if (type === 'runnerOnNode') {
    const cache = erJobCacheOf(data as Fact.RunnerOnNode);
    if (cache) fileOnRunner(facts, runners, 'erJobCache', cache, cache.runnerName);
    return false;
  }
  if (type in RUNNER_FACTS) {
    const kind = RUNNER_FACTS[type as keyof typeof RUNNER_FACTS];
    const fact = data as Loss & RunnerWarning & Fact.ErJobCacheEntry & Fact.MissingPod;
    fileOnRunner(facts, runners, kind.into, fact, kind.runnerOf(fact));
    return true;
  }
  if (type in OTHER_FACTS) {
    (facts[OTHER_FACTS[type as keyof typeof OTHER_FACTS]] as unknown[]).push(data);
    return true;
  }
  return false;
}

/** A fact about one runner, and the runner among those the read names. */
function fileOnRunner(
  facts: StoredFacts,
  runners: RunnerRef[],
  into: 'losses' | 'runnerWarnings' | 'erJobCache' | 'missingPods',
  data: { cluster: string; namespace: string },
  name: string,
): void {
  (facts[into] as unknown[]).push(data);
  const known = runners.some(
    (x) => x.cluster === data.cluster && x.namespace === data.namespace && x.name === name,
  );
  if (!known) runners.push({ cluster: data.cluster, namespace: data.namespace, name });
}
