/**
 * The topics of the topology (topics/topics.json describes their settings). A namespace prefix
 * lets several independent deployments, or tests, share one cluster without touching each other.
 */
export interface TopicNames {
  readonly facts: string;
  readonly agentEvents: string;
  readonly deadLetters: string;
  readonly engineFacts: string;
  readonly results: string;
  readonly alerts: string;
  readonly runState: string;
  readonly runMonitorChangelog: string;
}

export function topicNames(prefix = ""): TopicNames {
  const name = (base: string): string => (prefix === "" ? base : `${prefix}.${base}`);
  return {
    facts: name("agentops.facts.v1"),
    agentEvents: name("agentops.agent-events.v1"),
    deadLetters: name("agentops.dlq.v1"),
    engineFacts: name("agentops.engine-facts.v1"),
    results: name("agentops.metric-results.v1"),
    alerts: name("agentops.alerts.v1"),
    runState: name("agentops.run-state.v1"),
    runMonitorChangelog: name("agentops.run-monitor-changelog.v1"),
  };
}
