import { dedupeFacts } from '../../../functions/engine/dedupe-facts.js';
import { facts, job, run } from '../domain/builders.js';

/**
 * The sweep's namespace slice reads a job through its runner's name and again through its run,
 * as an event's slice does; before every slice was de-duplicated, the sweep's was decided with
 * the job twice, and rule 4's cancel named it twice ("job 1, 1").
 */
describe('dedupeFacts: an item read through two indexes counts once', () => {
  it('a job and a run attempt read twice are kept once, distinct ones all kept', () => {
    const a = job({ jobId: 401 });
    const b = job({ jobId: 402 });
    const r1 = run({ runAttempt: 1 });
    const r2 = run({ runAttempt: 2 });
    const twice = facts({ jobs: [a, b, a], runs: [r1, r2, r1] });
    const once = dedupeFacts(twice);
    expect(once.jobs.map((j) => j.job.jobId)).toEqual([401, 402]);
    expect(once.runs.map((r) => r.run.runAttempt)).toEqual([1, 2]);
    expect(dedupeFacts(once)).toEqual(once);
  });
});
