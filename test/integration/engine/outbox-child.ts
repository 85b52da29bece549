/**
 * A remediate invocation in its own process, for the crash test: it runs the engine against the
 * parent's twins and store, and after acting (before publishing the audit event) it says so on
 * stdout and waits, so that the parent can kill it with SIGKILL at exactly that point.
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher } from '../../../functions/adapters/bus/eventbridge-publisher.js';
import { ClusterConnections } from '../../../functions/adapters/kubernetes/cluster-connections.js';
import { DynamoFactsStore } from '../../../functions/adapters/store/dynamo-facts-store.js';
import { createDocumentClient } from '../../../functions/config/compose-clients.js';
import type { Policy } from '../../../functions/domain/policy/policy.js';
import { runEngine } from '../../../functions/engine/run-engine.js';
import type { GithubGateway } from '../../../functions/ports/github-gateway.js';

const setup = JSON.parse(process.env.OUTBOX_CHILD_SETUP ?? '{}') as {
  dynamo: string;
  table: string;
  bus: string;
  kubeconfig: string;
  cluster: string;
  now: number;
  policy: Policy;
};
const clock = { now: () => setup.now };
const noGithub = new Proxy({} as GithubGateway, {
  get: () => () => Promise.reject(new Error('no GitHub in this test')),
});

await runEngine(
  { kind: 'sweep' },
  {
    store: new DynamoFactsStore(
      createDocumentClient({
        endpoint: setup.dynamo,
        region: 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
      setup.table,
    ),
    clusters: new ClusterConnections({
      clusters: { [setup.cluster]: { kind: 'kubeconfig', kubeconfig: setup.kubeconfig } },
      clock,
    }),
    github: noGithub,
    bus: new EventBridgePublisher(
      new EventBridgeClient({
        endpoint: setup.bus,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'sim', secretAccessKey: 'sim' },
      }),
      { busName: 'runner-medic', sleep: async () => undefined },
    ),
    policy: async () => setup.policy,
    clock,
    log: { info: () => undefined, warn: () => undefined },
    metrics: { count: () => undefined, milliseconds: () => undefined },
    afterAct: async (action) => {
      if (process.env.OUTBOX_CHILD_HANG_AFTER_ACT !== '1') return;
      process.stdout.write(`ACTED ${action.key}\n`);
      // Hang until the parent's SIGKILL: a timer keeps the event loop alive, or Node would exit
      // by itself (an unsettled top-level await) once the store's sockets close.
      await new Promise(() => setInterval(() => undefined, 1_000));
    },
  },
);
process.stdout.write('FINISHED\n');
