import { classifyEc2Event, classifyEvent } from '../domain/classify/classify.js';
import type { ClusterSightings } from '../ports/cluster-sightings.js';
import type { FactsStore } from '../ports/facts-store.js';
import type { Trigger } from '../ports/trigger.js';

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
          // Placed on its node when the sweep has seen the instance's node: the sweep then finds
          // it with the cluster's other node signals, and decides that node's idle runners.
          const { node } = signal.instanceId
            ? await store.readInstance(signal.instanceId, now)
            : { node: null };
          await store.recordNodeSignal(node ? { ...signal, ...node } : signal, now);
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

/**
 * Notes the cluster names exporter events arrive with, configured or not, before unknown ones
 * are rejected: the doctor lists clusters that send events but are not configured, and
 * configured clusters whose exporter went silent. At most one write per cluster per minute
 * (cluster-sightings.ts); a failure to note is logged and never stops the trigger.
 */
export async function noteSightings(
  trigger: Trigger,
  configured: readonly string[],
  sightings: ClusterSightings | undefined,
  now: number,
  log: { warn(message: string, fields?: object): void },
): Promise<void> {
  if (!sightings || trigger.kind !== 'cluster' || trigger.input.kind !== 'kube-events') return;
  const names = new Set(trigger.input.events.map((e) => e.cluster));
  for (const cluster of names) {
    try {
      await sightings.noteEvent(cluster, configured.includes(cluster), now, now);
    } catch (error) {
      log.warn('could not note the cluster of an event', {
        cluster,
        error: (error as Error).message,
      });
    }
  }
}
