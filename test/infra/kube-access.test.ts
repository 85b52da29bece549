/**
 * The Kubernetes calls runner-medic makes, three ways that must agree:
 * - declared: functions/adapters/kubernetes/kube-access.ts;
 * - made: every public method of the real KubeClusterGateway, over the real client-node, against
 *   the sim/kube API twin, read back from the twin's request log for the runner-medic actor;
 * - granted: the RBAC manifests in infra/kubernetes/rbac/ (each call granted, nothing more).
 */
import { readFileSync } from 'node:fs';
import { KUBE_ACCESS, type KubeAccess } from '../../functions/adapters/kubernetes/kube-access.js';
import { KubeClusterGateway } from '../../functions/adapters/kubernetes/kube-cluster-gateway.js';
import type { ApiServer } from '../../sim/kube/api/api-server.js';
import { applyManifest } from '../../sim/kube/manifest.js';
import {
  ER_FINALIZER,
  NS,
  kubeConfigFor,
  seedEphemeralRunner,
  seedRunnerPod,
  startSim,
} from '../integration/kube-gateway/sim-fixture.js';
import { readManifests } from './infra-fixtures.js';

type Call = Pick<KubeAccess, 'verb' | 'group' | 'resource' | 'scope'> & { subresource?: string };

const key = (c: Call) =>
  `${c.verb} ${c.group || 'core'}/${c.resource}${c.subresource ? `/${c.subresource}` : ''} (${c.scope})`;

/** A request path of the twin's log as an RBAC request: verb, group, resource, scope. */
function callOf(verb: string, path: string): Call {
  const p = new URL(path, 'http://x').pathname.split('/').filter(Boolean);
  const [root, ...rest] = p;
  const group = root === 'api' ? '' : (rest.shift() as string);
  rest.shift(); // version
  let namespaced = false;
  if (rest[0] === 'namespaces' && rest.length > 2) {
    namespaced = true;
    rest.splice(0, 2);
  }
  const [resource = '', , subresource] = rest;
  return {
    verb: verb as KubeAccess['verb'],
    group: group as KubeAccess['group'],
    resource: resource as KubeAccess['resource'],
    scope: namespaced ? 'namespaced' : 'cluster',
    ...(subresource ? { subresource } : {}),
  };
}

/** The gateway's public methods, read from its class (private helpers are marked `private`). */
function publicMethods(): string[] {
  const source = readFileSync('functions/adapters/kubernetes/kube-cluster-gateway.ts', 'utf8');
  const body = /export class KubeClusterGateway[\s\S]*?\n}\n/.exec(source)?.[0] ?? '';
  return [...body.matchAll(/^ {2}(?:async )?(\w+)\s*[(<]/gm)]
    .map((m) => m[1] as string)
    .filter((name) => name !== 'constructor');
}

type Mode = 'namespaced' | 'all-namespaces';
type Exercise = (g: KubeClusterGateway, mode: Mode) => Promise<unknown>;

let server: ApiServer;
const SCALE_SET = 'arc-runner-set';
const NODE = 'ip-10-0-0-1.ec2.internal';

function seed(): { erUid: string; podUid: string; er2Uid: string } {
  const er = seedEphemeralRunner(server, 'runner-a', { finalizers: [ER_FINALIZER] });
  const er2 = seedEphemeralRunner(server, 'runner-b');
  seedEphemeralRunner(server, 'runner-c');
  const pod = seedRunnerPod(server, 'runner-a', { nodeName: NODE, owner: er });
  return {
    erUid: er.metadata.uid as string,
    er2Uid: er2.metadata.uid as string,
    podUid: pod.metadata.uid as string,
  };
}

/**
 * How the test exercises each public method, in both modes: with the configured runner
 * namespaces, and for a cluster configured without them (lists across all namespaces).
 */
const EXERCISES: Record<string, Exercise> = {
  listRunners: (g, mode) => (mode === 'namespaced' ? g.listRunners(NS) : g.listRunners()),
  listRunnersPage: async (g) => {
    await g.listRunnersPage(NS, null, 1); // a partial page: pods by name
    await g.listRunnersPage(NS, null, 500); // the whole namespace in one page
  },
  findRunnerOfScaleSet: (g, mode) =>
    mode === 'namespaced'
      ? g.findRunnerOfScaleSet(SCALE_SET, [NS])
      : g.findRunnerOfScaleSet(SCALE_SET),
  listNodes: (g) => g.listNodes(),
  getNode: async (g) => {
    nodeReads.push(
      (await g.getNode(NODE))?.name ?? null,
      (await g.getNode('ip-10-0-0-9.ec2.internal'))?.name ?? null,
      // Selector syntax in a name would widen the list to every node: no call is made.
      (await g.getNode(`${NODE},metadata.name!=x`))?.name ?? null,
    );
  },
  listRunnerPodsOnNode: (g, mode) =>
    mode === 'namespaced' ? g.listRunnerPodsOnNode(NODE, [NS]) : g.listRunnerPodsOnNode(NODE),
  getEphemeralRunner: (g) => g.getEphemeralRunner(NS, 'runner-a'),
  getPod: (g) => g.getPod(NS, 'runner-a'),
  removeFinalizers: (g) => g.removeFinalizers(NS, 'runner-a', ids.erUid, [ER_FINALIZER]),
  deletePod: async (g) => {
    await g.deletePod(NS, 'runner-a', ids.podUid, false);
    await g.deletePod(NS, 'runner-a', ids.podUid, true);
  },
  deleteEphemeralRunner: (g) => g.deleteEphemeralRunner(NS, 'runner-b', ids.er2Uid),
  followRunners: async (g, mode) => {
    const scope = mode === 'namespaced' ? NS : null;
    const state = {
      ephemeralRunners: { objects: new Map(), resourceVersion: null },
      pods: { objects: new Map(), resourceVersion: null },
    };
    await g.followRunners(scope, state); // no cursor yet: lists
    await g.followRunners(scope, state); // resumes a watch from the list's resourceVersion
  },
  followNodes: async (g) => {
    const state = { objects: new Map(), resourceVersion: null };
    await g.followNodes(state); // no cursor yet: lists
    await g.followNodes(state); // resumes a watch from the list's resourceVersion
  },
};
let ids: ReturnType<typeof seed>;
/** What getNode answered, in both modes: the node, a missing node, a selector-widening name. */
const nodeReads: (string | null)[] = [];
const outsideGrant: number[] = [];

/** The RBAC files a platform engineer applies for each mode (docs/deploy.md, step 6). */
function applyRbac(mode: Mode): void {
  const file = (name: string) => readFileSync(`infra/kubernetes/rbac/${name}`, 'utf8');
  applyManifest(server.api, file('cluster.yaml'), { actor: 'admin' });
  if (mode === 'namespaced')
    applyManifest(server.api, file('runner-namespace.yaml'), { actor: 'admin', namespaces: [NS] });
  else applyManifest(server.api, file('all-namespaces.yaml'), { actor: 'admin' });
}

/** HTTP statuses of runner-medic's requests, over both modes. */
const statuses: number[] = [];

/**
 * Runs every exercise in one mode on a fresh twin that enforces exactly the shipped RBAC; the
 * calls each method made.
 */
async function observe(mode: Mode): Promise<Map<string, Call[]>> {
  ({ server } = await startSim());
  try {
    server.enableRbac();
    applyRbac(mode);
    server.api.create('admin', 'nodes', undefined, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE, labels: { 'karpenter.sh/nodepool': 'runners' } },
      spec: { providerID: 'aws:///eu-west-1a/i-0123456789abcdef0' },
    });
    ids = seed();
    const gateway = new KubeClusterGateway({
      cluster: 'sim',
      kubeConfig: kubeConfigFor(server),
      pageSize: 50,
    });
    const byMethod = new Map<string, Call[]>();
    for (const [method, exercise] of Object.entries(EXERCISES)) {
      const before = server.api.audit.requests.length;
      await exercise(gateway, mode);
      const requests = server.api.audit.requests
        .slice(before)
        .filter((r) => r.by === 'runner-medic');
      statuses.push(...requests.map((r) => r.code));
      const calls = requests.map((r) => callOf(r.verb, r.path));
      byMethod.set(method, calls);
    }
    if (mode === 'namespaced') {
      // Outside the runner namespaces the same grants refuse.
      const before = server.api.audit.requests.length;
      await expect(gateway.getPod('other', 'runner-a')).rejects.toThrow();
      outsideGrant.push(...server.api.audit.requests.slice(before).map((r) => r.code));
    }
    return byMethod;
  } finally {
    await server.stop();
  }
}

const declared = (when: KubeAccess['when'][]) =>
  new Set(KUBE_ACCESS.filter((a) => when.includes(a.when)).map(key));

describe('the Kubernetes calls runner-medic makes', () => {
  let namespaced: Map<string, Call[]>;
  let allNamespaces: Map<string, Call[]>;

  beforeAll(async () => {
    namespaced = await observe('namespaced');
    allNamespaces = await observe('all-namespaces');
  });

  it('is allowed every call by the shipped RBAC, and refused outside it', () => {
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((code) => code === 401 || code === 403)).toEqual([]);
    expect(outsideGrant).toEqual([403]);
  });

  it('reads one node with list alone: the node by name, null for a missing or impossible name', () => {
    expect(nodeReads).toEqual([NODE, null, null, NODE, null, null]);
    const nodeCalls = [namespaced, allNamespaces].flatMap((m) => m.get('getNode') ?? []);
    expect(nodeCalls.map(key)).toEqual(Array(4).fill('list core/nodes (cluster)'));
  });

  it('the test exercises every public method of the gateway', () => {
    expect(new Set(Object.keys(EXERCISES))).toEqual(new Set(publicMethods()));
  });

  it('with runner namespaces configured, makes exactly the `always` calls', () => {
    const made = new Set([...namespaced.values()].flat().map(key));
    expect(made).toEqual(declared(['always']));
  });

  it('without them, makes only declared calls, including the all-namespaces lists', () => {
    const made = new Set([...allNamespaces.values()].flat().map(key));
    for (const call of made) expect(declared(['always', 'all-namespaces'])).toContain(call);
    for (const call of declared(['all-namespaces'])) expect(made).toContain(call);
  });

  it('each call is declared for the method that makes it', () => {
    for (const observed of [namespaced, allNamespaces])
      for (const [method, calls] of observed)
        for (const call of calls) {
          const entry = KUBE_ACCESS.find((a) => key(a) === key(call));
          expect([method, key(call), entry?.by.includes(method)]).toEqual([
            method,
            key(call),
            true,
          ]);
        }
  });
});

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
type Manifest = {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string; apiGroup: string };
  subjects?: { kind: string; name: string; apiGroup?: string }[];
};

const rbac = (file: string) =>
  readManifests(`infra/kubernetes/rbac/${file}`) as unknown as Manifest[];

/** What a role grants, as `verb group/resource` strings. */
function grants(role: Manifest): Set<string> {
  const out = new Set<string>();
  for (const r of role.rules ?? [])
    for (const g of r.apiGroups)
      for (const res of r.resources) for (const v of r.verbs) out.add(`${v} ${g || 'core'}/${res}`);
  return out;
}

const needs = (filter: (a: KubeAccess) => boolean) =>
  new Set(KUBE_ACCESS.filter(filter).map((a) => `${a.verb} ${a.group || 'core'}/${a.resource}`));

describe('the RBAC manifests grant each declared call and nothing more', () => {
  const all = ['runner-namespace.yaml', 'cluster.yaml', 'all-namespaces.yaml'].flatMap(rbac);

  it('use no wildcard and bind only the runner-medic group, each to its own role', () => {
    for (const m of all) {
      for (const r of m.rules ?? [])
        for (const v of [...r.apiGroups, ...r.resources, ...r.verbs]) expect(v).not.toContain('*');
      if (m.subjects) {
        expect(m.subjects).toEqual([
          { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'runner-medic' },
        ]);
        const role = all.find(
          (r) => r.kind === m.roleRef?.kind && r.metadata.name === m.roleRef?.name,
        );
        expect(role).toBeDefined();
      }
    }
  });

  it('runner-namespace.yaml: a namespace-less Role (kubectl apply -n) with the namespaced calls', () => {
    const [role, binding, ...rest] = rbac('runner-namespace.yaml');
    expect(rest).toEqual([]);
    expect([role?.kind, binding?.kind]).toEqual(['Role', 'RoleBinding']);
    expect(role?.metadata.namespace).toBeUndefined();
    expect(binding?.metadata.namespace).toBeUndefined();
    expect(grants(role as Manifest)).toEqual(needs((a) => a.scope === 'namespaced'));
  });

  it('cluster.yaml: list and watch on nodes only, the calls on cluster-scoped resources', () => {
    const role = rbac('cluster.yaml').find((m) => m.kind === 'ClusterRole') as Manifest;
    expect(grants(role)).toEqual(needs((a) => a.scope === 'cluster' && a.when === 'always'));
    expect([...grants(role)].sort()).toEqual(['list core/nodes', 'watch core/nodes']);
  });

  it('all-namespaces.yaml: the namespaced calls and the cross-namespace lists, cluster-wide', () => {
    const role = rbac('all-namespaces.yaml').find((m) => m.kind === 'ClusterRole') as Manifest;
    expect(grants(role)).toEqual(
      needs((a) => a.scope === 'namespaced' || a.when === 'all-namespaces'),
    );
  });
});
