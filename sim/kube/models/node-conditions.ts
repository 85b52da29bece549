/**
 * The kubelet's words for node pressure (pkg/kubelet/eviction/helpers.go, nodestatus setters):
 * eviction messages, node conditions, their events and the taints the node lifecycle adds.
 */
export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';
export type EvictionSignal = 'memory' | 'disk' | 'pid';

export interface EvictionSignalShape {
  resource: string;
  condition: PressureCondition;
  threshold: string;
  available: string;
  /** Container usage; pid evictions name no container. */
  usage?: string;
}

export const EVICTION_SIGNALS: Record<EvictionSignal, EvictionSignalShape> = {
  memory: {
    resource: 'memory',
    condition: 'MemoryPressure',
    threshold: '100Mi',
    available: '87232Ki',
    usage: '5434828Ki',
  },
  disk: {
    resource: 'ephemeral-storage',
    condition: 'DiskPressure',
    threshold: '2Gi',
    available: '1523896Ki',
    usage: '19876244Ki',
  },
  pid: { resource: 'pids', condition: 'PIDPressure', threshold: '1000', available: '412' },
};

/** `The node was low on resource: memory. Threshold quantity: 100Mi, available: 87232Ki. Container runner was using …` */
export function evictionMessage(signal: EvictionSignal, container: string | undefined): string {
  const s = EVICTION_SIGNALS[signal];
  let message = `The node was low on resource: ${s.resource}. Threshold quantity: ${s.threshold}, available: ${s.available}. `;
  if (s.usage && container)
    message += `Container ${container} was using ${s.usage}, request is 0, has larger consumption of ${s.resource}. `;
  return message;
}

const SHAPES: Record<
  PressureCondition,
  { on: [string, string, string]; off: [string, string, string]; taint: string }
> = {
  MemoryPressure: {
    on: [
      'KubeletHasInsufficientMemory',
      'kubelet has insufficient memory available',
      'NodeHasInsufficientMemory',
    ],
    off: [
      'KubeletHasSufficientMemory',
      'kubelet has sufficient memory available',
      'NodeHasSufficientMemory',
    ],
    taint: 'node.kubernetes.io/memory-pressure',
  },
  DiskPressure: {
    on: ['KubeletHasDiskPressure', 'kubelet has disk pressure', 'NodeHasDiskPressure'],
    off: ['KubeletHasNoDiskPressure', 'kubelet has no disk pressure', 'NodeHasNoDiskPressure'],
    taint: 'node.kubernetes.io/disk-pressure',
  },
  PIDPressure: {
    on: [
      'KubeletHasInsufficientPID',
      'kubelet has insufficient PID available',
      'NodeHasInsufficientPID',
    ],
    off: [
      'KubeletHasSufficientPID',
      'kubelet has sufficient PID available',
      'NodeHasSufficientPID',
    ],
    taint: 'node.kubernetes.io/pid-pressure',
  },
};

/** Condition reason/message, the kubelet's node event reason, and the NoSchedule taint key. */
export function pressureShape(
  condition: PressureCondition,
  on: boolean,
): { reason: string; message: string; event: string; taint: string } {
  const [reason, message, event] = on ? SHAPES[condition].on : SHAPES[condition].off;
  return { reason, message, event, taint: SHAPES[condition].taint };
}
