import { classifyEc2Event, classifyEvent } from '../domain/classify.js';
import type { FactsStore } from '../ports/facts-store.js';
import type { Trigger } from './trigger.js';

export interface RecordSummary {
  recorded: number;
  ignored: string[];
}

/** Stores what a trigger says as facts. Unrecognized parts are reported, never thrown. */
export async function recordTrigger(
  trigger: Trigger,
  store: FactsStore,
  now: number,
): Promise<RecordSummary> {
  const summary: RecordSummary = { recorded: 0, ignored: [] };
  switch (trigger.kind) {
    case 'observation': {
      const o = trigger.observation;
      if (o.kind === 'run.completed') {
        await store.recordRun(
          { repository: o.repository, installationId: o.installationId, run: o.run },
          now,
        );
      } else {
        await store.recordJob(
          {
            repository: o.repository,
            installationId: o.installationId,
            job: o.job,
            annotations: null,
          },
          now,
        );
      }
      summary.recorded++;
      return summary;
    }
    case 'cluster': {
      const input = trigger.input;
      if (input.kind === 'ec2') {
        const signal = classifyEc2Event(input.event);
        if (signal) {
          await store.recordNodeSignal(signal, now);
          summary.recorded++;
        } else summary.ignored.push(`EC2 event ${input.event.kind} needs no action`);
        return summary;
      }
      summary.ignored.push(...input.rejected.map((r) => `event ${r.id ?? '?'}: ${r.reason}`));
      for (const event of input.events) {
        const c = classifyEvent(event);
        if (c.kind === 'loss') await store.recordLoss(c.loss, now);
        else if (c.kind === 'node-signal') await store.recordNodeSignal(c.signal, now);
        else if (c.kind === 'runner-warning') await store.recordRunnerWarning(c.warning, now);
        else {
          summary.ignored.push(
            `${event.reason} on ${event.involvedObject.kind} ${event.involvedObject.name}: ${c.reason}`,
          );
          continue;
        }
        summary.recorded++;
      }
      return summary;
    }
    case 'sweep':
    case 'wake':
      return summary;
  }
}
