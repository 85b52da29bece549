import { generateKeyPairSync } from 'node:crypto';
import { Octokit } from '@octokit/core';
import { restEndpointMethods } from '@octokit/plugin-rest-endpoint-methods';
import { RequestError } from '@octokit/request-error';
import { SimClock } from '../../../sim/clock.js';
import { GitHubSim } from '../../../sim/github/github-sim.js';
import type { GitHubSimOptions } from '../../../sim/github/github-sim.js';
import type { WorkflowSpec } from '../../../sim/github/model/types.js';

export const RestOctokit = Octokit.plugin(restEndpointMethods);
export type RestOctokit = InstanceType<typeof RestOctokit>;

export const ORG = 'acme';
export const REPO = 'acme/app';
export const SCALE_SET = 'arc-linux';

/** An RSA key no twin was given: the twins share one unless told otherwise (app-credentials.ts). */
export function foreignAppKey(): string {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;
}

/** A sim with one org, one repo, the App installed, one ARC scale set, and a `ci` workflow. */
export function buildWorld(workflow: WorkflowSpec, options: Partial<GitHubSimOptions> = {}) {
  const clock = options.clock ?? new SimClock();
  const sim = new GitHubSim({ seed: 7, ...options, clock });
  sim.createOrg(ORG);
  sim.createRepo(REPO);
  const installationId = sim.createInstallation(ORG);
  sim.defineWorkflow(REPO, workflow);
  const scaleSetId = sim.actions.registerScaleSet({ owner: ORG, name: SCALE_SET });
  let runnerCount = 0;
  /** Registers a runner the way ARC does, brings it online and lets it ask for a job. */
  const startRunner = (name = `${SCALE_SET}-runner-${++runnerCount}`) => {
    const runnerId = sim.actions.registerRunner(scaleSetId, name);
    return { name, runnerId, assignment: sim.actions.acquireJob(name) };
  };
  return { clock, sim, installationId, scaleSetId, startRunner };
}

export function octokitFor(baseUrl: string, token: string): RestOctokit {
  return new RestOctokit({ baseUrl, auth: token });
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

export { RequestError };

/** Awaits a request that must fail over HTTP; returns octokit's RequestError. */
export async function rejection(promise: Promise<unknown>): Promise<RequestError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RequestError) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
}
