/** Discovery documents (legacy, unaggregated), enough for client-go/kubectl and client-node. */
import { openApiV3 } from './openapi.js';
import { RESOURCES, apiVersionOf, type ResourceDef } from './resources.js';

const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-runner-medic-sim',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function groups(): Map<string, string[]> {
  const out = new Map<string, string[]>([['policy', ['v1']]]);
  for (const r of RESOURCES) {
    if (!r.group) continue;
    const versions = out.get(r.group) ?? [];
    if (!versions.includes(r.version)) versions.push(r.version);
    out.set(r.group, versions);
  }
  return out;
}

function resourceEntries(defs: ResourceDef[]): unknown[] {
  const out: unknown[] = [];
  for (const r of defs) {
    out.push({
      name: r.plural,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
      ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      ...(r.categories ? { categories: r.categories } : {}),
    });
    if (r.subresources.includes('status')) {
      out.push({
        name: `${r.plural}/status`,
        singularName: '',
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: ['get', 'patch', 'update'],
      });
    }
    if (r.subresources.includes('eviction')) {
      out.push({
        name: `${r.plural}/eviction`,
        singularName: '',
        namespaced: r.namespaced,
        group: 'policy',
        version: 'v1',
        kind: 'Eviction',
        verbs: ['create'],
      });
    }
  }
  return out;
}

/** The body for a discovery path, or undefined for 404. */
export function discovery(path: string, serverAddress: string): unknown {
  if (path === '/version') return SERVER_VERSION;
  if (path.startsWith('/openapi/v3')) return openApiV3(path);
  if (path === '/healthz' || path === '/livez' || path === '/readyz') return 'ok';
  if (path === '/api') {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }
  if (path === '/apis') {
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [...groups()].map(([name, versions]) => groupDoc(name, versions)),
    };
  }
  if (path === '/api/v1') {
    return {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: resourceEntries(RESOURCES.filter((r) => r.group === '')),
    };
  }
  const g = /^\/apis\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  if (g) {
    const versions = groups().get(g[1] as string);
    if (!versions) return undefined;
    if (!g[2]) return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(g[1] as string, versions) };
    if (!versions.includes(g[2])) return undefined;
    const defs = RESOURCES.filter((r) => apiVersionOf(r) === `${g[1]}/${g[2]}`);
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${g[1]}/${g[2]}`,
      resources: resourceEntries(defs),
    };
  }
  return undefined;
}

function groupDoc(name: string, versions: string[]) {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}
