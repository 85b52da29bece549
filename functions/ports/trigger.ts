import type { ClusterInput } from '../domain/parse/parse-cluster-input.js';
import type { GithubObservation } from '../domain/model/observation.js';

/** Why the engine runs: a fact arrived (edge), the schedule ticked (level), or a timer is due. */
export type Trigger =
  | { kind: 'observation'; observation: GithubObservation }
  | { kind: 'cluster'; input: ClusterInput }
  | { kind: 'sweep' }
  | { kind: 'wake' };
