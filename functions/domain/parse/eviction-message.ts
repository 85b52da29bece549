import type { KarpenterReason, PressureResource } from '../model/loss.js';

/** kubelet: `The node was low on resource: memory. … Container runner was using 3Gi, …` */
export function parseLowResource(
  message: string,
): { resource: PressureResource; container: string | null } | null {
  const m = /The node was low on resource: ([\w.-]+)/.exec(message);
  if (!m?.[1]) return null;
  const c = /Container (\S+) was using/.exec(message);
  return { resource: resourceKind(m[1]), container: c?.[1] ?? null };
}

export function resourceKind(resource: string): PressureResource {
  const r = resource.toLowerCase();
  if (r.startsWith('memory')) return 'memory';
  if (r.startsWith('pid')) return 'pid';
  if (r.includes('storage') || r.includes('nodefs') || r.includes('imagefs') || r === 'disk')
    return 'disk';
  return 'other';
}

/** kubelet admission: `The node had condition: [MemoryPressure].` (maybe after `Pod was rejected: `) */
export function parseNodeCondition(
  message: string,
): { condition: string; resource: PressureResource } | null {
  const m = /The node had condition: \[(\w+)\]/.exec(message);
  if (!m?.[1]) return null;
  const resource: PressureResource = m[1].startsWith('Memory')
    ? 'memory'
    : m[1].startsWith('Disk')
      ? 'disk'
      : m[1].startsWith('PID')
        ? 'pid'
        : 'other';
  return { condition: m[1], resource };
}

/** Karpenter `Evicted pod: <reason>`; the reason text changed across versions. */
export function karpenterReason(text: string): KarpenterReason {
  const t = text.toLowerCase();
  if (/underutilized|empty|consolidat/.test(t)) return 'consolidation';
  if (t.includes('drift')) return 'drift';
  if (t.includes('expir')) return 'expiry';
  if (t.includes('forceful')) return 'forceful';
  return 'other';
}
