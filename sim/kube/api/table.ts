/** Server-side `Table` rendering (Accept: ...;as=Table), which `kubectl get` asks for. */
import type { KubeObject, Node, Pod } from '../types.js';
import { loadCrd } from './crd-schemas.js';
import type { PrinterColumn, ResourceDef } from './resources.js';

export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept);
}

/** `5s`, `3m`, `2h`, `4d`: kubectl's short relative durations. */
function age(fromIso: string | undefined, now: number): string {
  if (!fromIso) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(fromIso)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

function jsonPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const seg of path.replace(/^\./, '').split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

type Row = (o: KubeObject, now: number) => unknown[];

function columnsFor(def: ResourceDef): { columns: PrinterColumn[]; row: Row } {
  const name: PrinterColumn = {
    name: 'Name',
    type: 'string',
    format: 'name',
    jsonPath: '.metadata.name',
    description: 'Name must be unique within a namespace.',
  };
  if (def.custom) {
    const cols = loadCrd(def.plural).printerColumns;
    return {
      columns: [name, ...cols],
      row: (o, now) => [
        o.metadata.name,
        ...cols.map((c) => cell(jsonPath(o, c.jsonPath), c.type, now)),
      ],
    };
  }
  const col = (n: string, type = 'string'): PrinterColumn => ({ name: n, type, jsonPath: '' });
  switch (def.plural) {
    case 'pods':
      return {
        columns: [
          name,
          col('Ready'),
          col('Status'),
          col('Restarts'),
          col('Age'),
          { ...col('IP'), priority: 1 },
          { ...col('Node'), priority: 1 },
        ],
        row: (o, now) => {
          const p = o as Pod;
          const cs = p.status?.containerStatuses ?? [];
          const ready = cs.filter((c) => c.ready).length;
          return [
            p.metadata.name,
            `${ready}/${p.spec.containers.length}`,
            podStatus(p),
            cs.reduce((n, c) => n + c.restartCount, 0),
            age(p.metadata.creationTimestamp, now),
            p.status?.podIP ?? '<none>',
            p.spec.nodeName ?? '<none>',
          ];
        },
      };
    case 'nodes':
      return {
        columns: [name, col('Status'), col('Roles'), col('Age'), col('Version')],
        row: (o, now) => {
          const n = o as Node;
          const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
          let status =
            ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown';
          if (n.spec.unschedulable) status += ',SchedulingDisabled';
          return [
            n.metadata.name,
            status,
            '<none>',
            age(n.metadata.creationTimestamp, now),
            n.status?.nodeInfo?.kubeletVersion ?? '',
          ];
        },
      };
    case 'events':
      return {
        columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Message')],
        row: (o, now) => {
          const e = o as unknown as {
            lastTimestamp?: string;
            type: string;
            reason: string;
            message: string;
            involvedObject: { kind: string; name: string };
          };
          return [
            age(e.lastTimestamp, now),
            e.type,
            e.reason,
            `${e.involvedObject.kind.toLowerCase()}/${e.involvedObject.name}`,
            e.message,
          ];
        },
      };
    case 'namespaces':
      return {
        columns: [name, col('Status'), col('Age')],
        row: (o, now) => [
          o.metadata.name,
          (o.status as { phase?: string } | undefined)?.phase ?? '',
          age(o.metadata.creationTimestamp, now),
        ],
      };
    default:
      return {
        columns: [name, col('Age')],
        row: (o, now) => [o.metadata.name, age(o.metadata.creationTimestamp, now)],
      };
  }
}

function cell(v: unknown, type: string, now: number): unknown {
  if (v === undefined || v === null) return null;
  if (type === 'date') return age(String(v), now);
  return v;
}

function podStatus(p: Pod): string {
  if (p.metadata.deletionTimestamp) return 'Terminating';
  if (p.status?.reason) return p.status.reason;
  const cs = p.status?.containerStatuses ?? [];
  for (const c of cs) {
    if (c.state.terminated?.reason) return c.state.terminated.reason;
    if (c.state.waiting?.reason) return c.state.waiting.reason;
  }
  return p.status?.phase ?? 'Pending';
}

export function toTable(
  def: ResourceDef,
  items: KubeObject[],
  meta: { resourceVersion: string; continue?: string },
  includeObject: string,
  now: number,
): unknown {
  const { columns, row } = columnsFor(def);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {
      resourceVersion: meta.resourceVersion,
      ...(meta.continue ? { continue: meta.continue } : {}),
    },
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description ?? '',
      priority: c.priority ?? 0,
    })),
    rows: items.map((o) => ({
      cells: row(o, now),
      object:
        includeObject === 'Object'
          ? o
          : includeObject === 'None'
            ? undefined
            : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}
