import { DATA_AND_CLOUD_RULES } from "./data-and-cloud-rules.ts";
import { EXECUTION_RULES } from "./execution-rules.ts";
import { FILESYSTEM_RULES } from "./filesystem-rules.ts";
import { GIT_RULES } from "./git-rules.ts";

import { DESTRUCTIVE_RULE_IDS, type DestructiveRule, type DestructiveRuleId } from "./rule-definition.ts";

const byId = new Map(
  [...FILESYSTEM_RULES, ...GIT_RULES, ...DATA_AND_CLOUD_RULES, ...EXECUTION_RULES].map((rule) => [rule.id, rule]),
);

/** Every rule, in the order of DESTRUCTIVE_RULE_IDS. */
export const DESTRUCTIVE_RULES: ReadonlyMap<DestructiveRuleId, DestructiveRule> = new Map(
  DESTRUCTIVE_RULE_IDS.map((id) => {
    const rule = byId.get(id);
    if (rule === undefined) throw new Error(`destructive rule ${id} has no definition`);
    return [id, rule];
  }),
);

export function destructiveRule(id: DestructiveRuleId): DestructiveRule {
  const rule = DESTRUCTIVE_RULES.get(id);
  if (rule === undefined) throw new Error(`unknown destructive rule ${id}`);
  return rule;
}
