import { describe, expect, it } from "vitest";
import { DESTRUCTIVE_RULES } from "../../../src/tripwires/rules/destructive-rules.ts";
import { createRunMonitor } from "../../../src/tripwires/monitor.ts";
import { exec, sandbox } from "./events.ts";

/** The examples written into each rule's data are executable: they must behave as documented. */
const SQL_START = /^(DROP|TRUNCATE|DELETE|UPDATE|SELECT|delete)\b/;

function destructiveRulesFor(command: string): string[] {
  const monitor = createRunMonitor();
  const event = SQL_START.test(command) ? sandbox("r", 0, "sql", { command }) : exec("r", 0, command);
  return monitor.process(event).alerts.map((alert) => alert.rule_id);
}

describe("destructive rule data", () => {
  for (const rule of DESTRUCTIVE_RULES.values()) {
    describe(`${rule.id} v${rule.version}`, () => {
      it("has a description and examples", () => {
        expect(rule.description.length).toBeGreaterThan(10);
        expect(rule.alerting.length).toBeGreaterThan(0);
      });
      for (const command of rule.alerting) {
        it(`alerts on ${JSON.stringify(command)}`, () => expect(destructiveRulesFor(command)).toContain(rule.id));
      }
      for (const command of rule.benign) {
        it(`stays quiet on ${JSON.stringify(command)}`, () => expect(destructiveRulesFor(command)).toEqual([]));
      }
    });
  }
});
