import type { Facts } from '../domain/model/facts.js';
import type { KnownOwner } from '../ports/facts-store.js';
import type { EngineDeps } from './engine-deps.js';

/** Repositories asked for queued runs per sweep, shared by all installations. */
export const QUEUED_REPOSITORIES_PER_SWEEP = 30;
/** Queued runs read per repository per sweep (one page). */
const QUEUED_RUNS_PER_REPOSITORY = 10;
/** Queued runs older than this are not looked for: the stored queued index covers them. */
const LOOK_BACK_MS = 24 * 3600 * 1000;
const PER_PAGE = 100;

const jobKey = (j: Facts['jobs'][number]) => `${j.repository.fullName}#${j.job.jobId}`;

/**
 * The sweep's GitHub-side level check: a few repositories of each installation per sweep, in
 * turn, are asked for their queued runs (`GET /repos/{owner}/{repo}/actions/runs?status=queued`),
 * and the queued jobs of those runs that a known scale set should take are stored. A queued job
 * whose every webhook and redelivery was lost is then seen starving like any other. Calls per
 * sweep are bounded: one page of repositories and at most QUEUED_REPOSITORIES_PER_SWEEP run
 * lists, plus one job list per queued run found; they do not grow with the number of runners.
 * Every call is an observe call: the walk goes as far as the installation's budget allows and
 * resumes there at the next sweep.
 */
export async function discoverQueuedJobs(
  known: Facts['jobs'],
  knownOwners: readonly KnownOwner[],
  deps: Pick<EngineDeps, 'store' | 'github' | 'log' | 'metrics'>,
  now: number,
): Promise<Facts['jobs']> {
  const { sets } = await deps.store.readScaleSets(now);
  const scaleSets = new Set(Object.keys(sets));
  if (scaleSets.size === 0) return [];
  const owners = knownOwners.filter(
    (o): o is { owner: string; installationId: number } => o.installationId !== null,
  );
  const share = Math.max(1, Math.floor(QUEUED_REPOSITORIES_PER_SWEEP / Math.max(1, owners.length)));
  const seen = new Set(known.map(jobKey));
  const found: Facts['jobs'] = [];
  for (const { owner, installationId } of owners) {
    try {
      const observe = <T>(read: () => Promise<T>) => deps.github.observe(installationId, read);
      const next = await deps.store.repositoryScan(owner);
      const page = Math.floor(next / PER_PAGE) + 1;
      const listed = await observe(() =>
        deps.github.listInstallationRepositories(installationId, page),
      );
      if (listed === null) continue;
      const from = next % PER_PAGE;
      const batch = listed.repositories.slice(from, from + share);
      let asked = 0;
      for (const repository of batch) {
        const ref = { repo: repository.fullName, installationId };
        const runs = await observe(() =>
          deps.github.listQueuedRuns(ref, now - LOOK_BACK_MS, QUEUED_RUNS_PER_REPOSITORY),
        );
        if (runs === null) break;
        // A repository counts as asked once every queued run's jobs were read: when the budget
        // runs out between them, the next sweep asks it again rather than passing it by.
        let read = true;
        for (const run of runs) {
          const jobs = await observe(() => deps.github.listJobs(ref, run.runId));
          if (jobs === null) {
            read = false;
            break;
          }
          for (const job of jobs) {
            const record = { repository, installationId, job, annotations: null };
            if (job.status !== 'queued' || seen.has(jobKey(record))) continue;
            if (!job.labels.some((l) => scaleSets.has(l.toLowerCase()))) continue;
            await deps.store.recordJob(record, now);
            seen.add(jobKey(record));
            found.push(record);
          }
        }
        if (!read) break;
        asked++;
      }
      const reachedEnd = from + asked >= listed.repositories.length && listed.last;
      const after = reachedEnd ? 0 : next + asked;
      if (after !== next) await deps.store.setRepositoryScan(owner, after, now);
    } catch (error) {
      deps.log.warn('installation unavailable', { org: owner, error: (error as Error).message });
      deps.metrics.count('InstallationUnavailable', { org: owner });
    }
  }
  if (found.length > 0)
    deps.log.warn('found queued jobs no webhook told of', {
      jobs: found.map((j) => `${j.repository.fullName}#${j.job.jobId}`),
    });
  return found;
}
