import type { Pod } from '../model/cluster-facts.js';

/** The runner version in a termination message, e.g. `Runner version v2.328.0 is deprecated`. */
export function versionIn(text: string): string | null {
  return /Runner version v?(\d+\.\d+\.\d+)/i.exec(text)?.[1] ?? null;
}

/**
 * The runner version of a pod, from its runner container's image tag (`…/actions-runner:2.328.0`);
 * null for a tag that is no version (`latest`) or a pod read without its image.
 */
export function runnerVersionOf(pod: Pod): string | null {
  return /:v?(\d+\.\d+\.\d+)(?:@.*)?$/.exec(pod.runnerImage ?? '')?.[1] ?? null;
}
