/**
 * The store's record of which clusters exporter events come from (dynalite), and the engine's
 * note of it for each kube-events trigger, configured or not.
 */
import { DynamoClusterSightings } from '../../functions/adapters/store/cluster-sightings.js';
import { createDocumentClient } from '../../functions/config/compose-clients.js';
import type { KubeEvent } from '../../functions/domain/model/cluster-facts.js';
import { noteSightings } from '../../functions/engine/record-trigger.js';
import { startEmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import type { EmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import type { ClusterSightings } from '../../functions/ports/cluster-sightings.js';

const T = Date.parse('2026-03-02T09:00:00Z');

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo('runner-medic-sightings');
});
afterAll(() => dynamo.close());

const store = () =>
  new DynamoClusterSightings(createDocumentClient(dynamo.clientConfig), dynamo.tableName);

function kubeEvent(cluster: string): KubeEvent {
  return {
    cluster,
    name: 'e',
    namespace: 'arc-runners',
    uid: `uid-${cluster}`,
    reason: 'Evicted',
    message: 'The node was low on resource: memory.',
    type: 'Warning',
    sourceComponent: 'kubelet',
    sourceHost: null,
    reportingComponent: null,
    annotations: {},
    involvedObject: {
      kind: 'Pod',
      name: 'p',
      namespace: 'arc-runners',
      uid: 'u',
      apiVersion: 'v1',
      fieldPath: null,
      labels: {},
      annotations: {},
      ownerReferences: [],
      deleted: false,
    },
    count: 1,
    at: T,
  };
}

describe('DynamoClusterSightings', () => {
  it('keeps the newest time per cluster: a late batch never makes a cluster look older', async () => {
    await store().noteEvent('prod', true, T, T);
    await store().noteEvent('prod', true, T - 600_000, T);
    expect(await store().sightings(T)).toEqual([
      { cluster: 'prod', configured: true, lastEventAt: T },
    ]);
  });

  it('writes at most once a minute per cluster from one container, whatever the event rate', async () => {
    const one = store();
    await one.noteEvent('busy', true, T, T);
    await one.noteEvent('busy', true, T + 30_000, T + 30_000);
    expect((await store().sightings(T)).find((s) => s.cluster === 'busy')?.lastEventAt).toBe(T);
    await one.noteEvent('busy', true, T + 61_000, T + 61_000);
    expect((await store().sightings(T)).find((s) => s.cluster === 'busy')?.lastEventAt).toBe(
      T + 61_000,
    );
  });
});

describe('noteSightings', () => {
  it('notes each cluster of a kube-events trigger once, configured or not', async () => {
    const notes: [string, boolean][] = [];
    const sightings: ClusterSightings = {
      noteEvent: async (cluster, configured) => void notes.push([cluster, configured]),
      sightings: async () => [],
    };
    const log = { warn: () => undefined };
    const trigger = {
      kind: 'cluster' as const,
      input: {
        kind: 'kube-events' as const,
        events: [kubeEvent('prod'), kubeEvent('stray'), kubeEvent('prod')],
        rejected: [],
      },
    };
    await noteSightings(trigger, ['prod'], sightings, T, log);
    expect(notes).toEqual([
      ['prod', true],
      ['stray', false],
    ]);
    await noteSightings({ kind: 'sweep' }, ['prod'], sightings, T, log);
    expect(notes).toHaveLength(2);
  });

  it('a store that fails is logged and never stops the trigger', async () => {
    const warnings: string[] = [];
    const failing: ClusterSightings = {
      noteEvent: async () => {
        throw new Error('throttled');
      },
      sightings: async () => [],
    };
    await noteSightings(
      {
        kind: 'cluster',
        input: { kind: 'kube-events', events: [kubeEvent('prod')], rejected: [] },
      },
      ['prod'],
      failing,
      T,
      { warn: (message) => void warnings.push(message) },
    );
    expect(warnings).toEqual(['could not note the cluster of an event']);
  });
});
