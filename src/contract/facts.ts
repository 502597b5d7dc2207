import type { z } from "zod";
import type {
  agentStepSchema,
  costSchema,
  deliverySummarySchema,
  modelCallSchema,
  packetSchema,
  repairSchema,
  sandboxEventSchema,
  taskSnapshotSchema,
} from "./fact-schema.ts";

/**
 * Measure fields a fact was accepted without (contract revision 2 §1): field → the JSON of the
 * invalid value as received; for a snapshot with task entry fields left out (revision 3 change 5),
 * `tasks` → the declared list. Part of the fact's content (its identity), read by no metric.
 */
export type InvalidMeasures = Readonly<Record<string, string>>;
type WithInvalidMeasures<T> = T & { readonly invalid_measures?: InvalidMeasures };

/** Accepted, normalised facts: timestamps are epoch milliseconds, absent optionals are undefined. */
export type ModelCall = WithInvalidMeasures<z.output<typeof modelCallSchema>>;
export type Cost = WithInvalidMeasures<z.output<typeof costSchema>>;
export type DeliverySummary = WithInvalidMeasures<z.output<typeof deliverySummarySchema>>;
export type Packet = WithInvalidMeasures<z.output<typeof packetSchema>>;
export type Repair = z.output<typeof repairSchema>;
export type TaskSnapshot = WithInvalidMeasures<z.output<typeof taskSnapshotSchema>>;
export type DefinedTask = TaskSnapshot["tasks"][number];
export type AgentStep = z.output<typeof agentStepSchema>;
export type SandboxEvent = z.output<typeof sandboxEventSchema>;

export type MetricFact = ModelCall | Cost | DeliverySummary | Packet | Repair | TaskSnapshot;
export type AgentEvent = AgentStep | SandboxEvent;
export type Fact = MetricFact | AgentEvent;

export function isAgentEvent(fact: Fact): fact is AgentEvent {
  return fact.type === "agent_step" || fact.type === "sandbox_event";
}
