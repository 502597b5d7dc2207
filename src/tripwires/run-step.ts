import type { AgentEvent, AgentStep, SandboxEvent } from "../contract/facts.ts";
import { actionIdentity, hash53 } from "./action-identity.ts";
import { makeAlert, type TripwireAlert } from "./alert.ts";
import type { CommandAnalyser } from "./commands/command-analyser.ts";
import type { TripwireConfig } from "./config.ts";
import { observeDataFlow } from "./detectors/credential-egress-detector.ts";
import { episodeRoot, groupObservedDeletion, openEpisode } from "./detectors/deletion-episodes.ts";
import { destructiveRule } from "./rules/destructive-rules.ts";
import { observeToolCall, trimLoopWindow } from "./detectors/loop-detector.ts";
import { observeStateChange, observeToolResult } from "./detectors/redundancy-detector.ts";
import { admitSeq, type RunState } from "./run-state.ts";
import { analyseSandboxEvent } from "./commands/sandbox-event-analysis.ts";

/**
 * One record applied to one run's state: the whole run monitor for a single run, synchronous and
 * deterministic. The state is updated in place (it is owned by the caller, who can serialise it at
 * any point); alerts come back in a fixed order.
 */
export function stepRun(state: RunState, event: AgentEvent, config: TripwireConfig, analyser: CommandAnalyser): TripwireAlert[] {
  const verdict = admitSeq(state, event.type, event.seq, config.dedupeWindow);
  if (verdict === "duplicate") {
    state.duplicatesIgnored++;
    return [];
  }
  if (verdict === "late") {
    state.lateIgnored++;
    return [];
  }
  state.lastEventTime = Math.max(state.lastEventTime, event.event_time);
  state.firstEventTime = Math.min(state.firstEventTime, event.event_time);
  state.lastSeq = Math.max(state.lastSeq, event.seq);
  const alerts = event.type === "agent_step" ? stepAgent(state, event, config) : stepSandbox(state, event, config, analyser);
  state.alertsEmitted += alerts.length;
  return alerts;
}

function stepAgent(state: RunState, step: AgentStep, config: TripwireConfig): TripwireAlert[] {
  state.stepsSeen++;
  // Messages and plans are not actions: they neither form nor break a loop.
  if (step.kind !== "tool_call" || step.tool === undefined) return [];
  const action = actionIdentity(step.tool, step.input);
  const alerts = observeToolCall(state.loop, { runId: state.runId, seq: step.seq, eventTime: step.event_time, action, tool: step.tool, failed: step.status === "error" }, config.loop);
  trimLoopWindow(state.loop, config.loop.actionWindow);
  const digest = step.observation_digest === undefined ? undefined : hash53(step.observation_digest);
  alerts.push(...observeToolResult(state.redundancy, { runId: state.runId, seq: step.seq, eventTime: step.event_time, action, digest }, config.redundancy));
  return alerts;
}

function stepSandbox(state: RunState, event: SandboxEvent, config: TripwireConfig, analyser: CommandAnalyser): TripwireAlert[] {
  state.sandboxEventsSeen++;
  const analysis = analyseSandboxEvent(event, analyser, config.destructive.home);
  if (analysis.changesState) observeStateChange(state.redundancy);
  const alerts: TripwireAlert[] = [];
  for (const finding of analysis.findings) {
    if (alerts.some((alert) => alert.rule_id === finding.ruleId)) continue; // one alert per rule per record: its seq range is the id
    if (finding.path !== undefined && finding.ruleId.startsWith("fs-delete-")) {
      if (event.kind === "file_delete") {
        if (groupObservedDeletion(state.deletionEpisodes, finding.ruleId, finding.path, event.event_time, config.destructive.deletionQuietSeconds * 1000)) {
          state.deletionsGrouped++;
          continue;
        }
      } else {
        openEpisode(state.deletionEpisodes, finding.ruleId, episodeRoot(finding.path, true), event.event_time);
      }
    }
    const rule = destructiveRule(finding.ruleId);
    alerts.push(
      makeAlert(rule, {
        run_id: state.runId,
        event_time: event.event_time,
        evidence: { seq_from: event.seq, seq_to: event.seq, command: event.command ?? finding.command, path: finding.path, detail: finding.detail },
        message: `${rule.severity === "critical" ? "destructive action" : "risky action"} (${rule.id}): ${finding.detail}`,
      }),
    );
  }
  if (analysis.credentialReads.length > 0 || analysis.egressTargets.length > 0) {
    alerts.push(...observeDataFlow(state.credential, { runId: state.runId, seq: event.seq, eventTime: event.event_time, credentialReads: analysis.credentialReads, egressTargets: analysis.egressTargets, command: event.command }));
  }
  return alerts;
}
