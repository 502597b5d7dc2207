import { problem, type Problem } from "./catalog-types.ts";

/**
 * The six metrics removed by the issue #43 / #79 scope decision (seed §5). Consumers must not
 * preserve them as hidden measures or aliases, so the catalog may not name them anywhere.
 */
export const REMOVED_METRIC_IDS = [
  "model-role-utility-profile",
  "configuration-utility-profile",
  "configuration-component-comparison",
  "configuration-reference-coverage",
  "packet-escalation-rate",
  "role-template-qualified-outcome-rate",
] as const;

/**
 * Reduces text to a hyphenated lower-case slug, so "Packet escalation rate", "packet_escalation_rate"
 * and "PacketEscalationRate" all read as packet-escalation-rate.
 */
function slug(text: string): string {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-");
}

/** The removed metric a text names, as an id, a name or an alias inside longer text; or undefined. */
export function removedMetricNamedBy(text: string): string | undefined {
  const padded = `-${slug(text)}-`;
  return REMOVED_METRIC_IDS.find((id) => padded.includes(`-${id}-`));
}

/** Walks every string (and every object key) in the document and reports each removed-metric mention. */
export function findRemovedMetricMentions(document: unknown): Problem[] {
  const problems: Problem[] = [];
  const visit = (value: unknown, path: string): void => {
    if (typeof value === "string") {
      const removed = removedMetricNamedBy(value);
      if (removed !== undefined)
        problems.push(
          problem(
            path,
            "REMOVED_METRIC",
            `names the removed metric ${removed}; removed metrics may not survive as ids, names or aliases (seed §5)`,
          ),
        );
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, `${path}/${index}`));
    } else if (typeof value === "object" && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        const removed = removedMetricNamedBy(key);
        if (removed !== undefined)
          problems.push(
            problem(
              `${path}/${escapePointer(key)}`,
              "REMOVED_METRIC",
              `field name names the removed metric ${removed} (seed §5)`,
            ),
          );
        visit(child, `${path}/${escapePointer(key)}`);
      }
    }
  };
  visit(document, "");
  return problems;
}

export function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
