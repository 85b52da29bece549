import type { Action, ActionOutcome } from '../domain/model/action.js';
import { describeCause } from '../domain/model/loss.js';
import type { BusEvent } from '../ports/event-publisher.js';

export const REMEDIATION_DETAIL_TYPE = 'Remediation';

/** The audit event every action emits on the bus (source `runner-medic`, detail-type `Remediation`). */
export function remediationEvent(
  action: Action,
  outcome: ActionOutcome,
  detail: string,
  now: number,
): BusEvent {
  return {
    source: 'runner-medic',
    detailType: REMEDIATION_DETAIL_TYPE,
    time: new Date(now),
    detail: {
      key: action.key,
      rule: action.rule,
      action: action.target.kind,
      target: action.target,
      cluster: action.scope.cluster,
      namespace: action.scope.namespace,
      scaleSet: action.scope.scaleSet,
      runner: action.scope.runnerName,
      repository: action.scope.repo,
      jobUrl: action.scope.jobUrl,
      cause: action.cause,
      causeText: action.cause ? describeCause(action.cause) : null,
      signal: action.signal,
      reason: action.reason,
      outcome,
      outcomeDetail: detail,
      dryRun: action.dryRun,
      // Which path recovered a lost job (re-runs): fast-path, lock-expiry or graceful.
      ...(action.recoveredBy ? { recoveredBy: action.recoveredBy } : {}),
      ...(action.target.kind === 'report-deprecated-runner'
        ? { runnerVersion: action.target.version }
        : {}),
      at: new Date(now).toISOString(),
    },
  };
}
