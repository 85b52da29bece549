/** Node objects as an EKS kubelet registers them (providerID `aws:///<zone>/<instance-id>`). */
import type { Rng } from '../../rng.js';
import { isoTime, type Node } from '../types.js';

export interface NodeSpecOptions {
  name: string;
  providerID: string;
  zone: string;
  region: string;
  instanceType: string;
  capacityType: 'spot' | 'on-demand';
  nodePool?: string;
  maxPods: number;
  labels?: Record<string, string>;
  internalIP: string;
}

export function nodeName(rng: Rng, region: string): { name: string; ip: string } {
  const ip = `10.0.${rng.int(256)}.${1 + rng.int(254)}`;
  return { name: `ip-${ip.replace(/\./g, '-')}.${region}.compute.internal`, ip };
}

export function nodeObject(o: NodeSpecOptions, now: number): Node {
  const t = isoTime(now);
  const cond = (type: string, status: 'True' | 'False', reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: t,
    lastTransitionTime: t,
  });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: o.name,
      labels: {
        'kubernetes.io/hostname': o.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/instance-type': o.instanceType,
        'topology.kubernetes.io/zone': o.zone,
        'topology.kubernetes.io/region': o.region,
        'karpenter.sh/capacity-type': o.capacityType,
        ...(o.nodePool
          ? {
              'karpenter.sh/nodepool': o.nodePool,
              'karpenter.sh/registered': 'true',
              'karpenter.sh/initialized': 'true',
            }
          : {}),
        ...(o.labels ?? {}),
      },
    },
    spec: { providerID: o.providerID },
    status: {
      conditions: [
        cond(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond(
          'PIDPressure',
          'False',
          'KubeletHasSufficientPID',
          'kubelet has sufficient PID available',
        ),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      capacity: {
        cpu: '8',
        memory: '32386544Ki',
        pods: String(o.maxPods),
        'ephemeral-storage': '104845292Ki',
      },
      allocatable: {
        cpu: '7910m',
        memory: '31369712Ki',
        pods: String(o.maxPods),
        'ephemeral-storage': '95551679124',
      },
      addresses: [
        { type: 'InternalIP', address: o.internalIP },
        { type: 'Hostname', address: o.name },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.32.3-eks-473151a',
        containerRuntimeVersion: 'containerd://1.7.27',
        operatingSystem: 'linux',
        architecture: 'amd64',
        osImage: 'Amazon Linux 2023.7.20250512',
      },
    },
  };
}
