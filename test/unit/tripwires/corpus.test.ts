import { describe, expect, it } from "vitest";
import { DESTRUCTIVE_RULE_IDS } from "../../../src/tripwires/rules/destructive-rules.ts";
import { evaluateCorpus, formatScore, loadCorpus } from "./corpus-evaluation.ts";

describe("labelled destructive-command corpus", () => {
  const rows = loadCorpus();
  const score = evaluateCorpus(rows);

  it("has at least 300 rows, benign look-alikes, obfuscations and SQL", () => {
    expect(rows.length).toBeGreaterThanOrEqual(300);
    expect(rows.filter((row) => row.label === "benign").length).toBeGreaterThanOrEqual(150);
    expect(rows.filter((row) => row.kind === "sql").length).toBeGreaterThanOrEqual(20);
    for (const row of rows) if (row.rule !== undefined) expect(DESTRUCTIVE_RULE_IDS).toContain(row.rule);
  });

  it("reaches precision and recall of at least 0.97, with the expected rule on every hit", () => {
    console.log(formatScore(score));
    expect(score.precision).toBeGreaterThanOrEqual(0.97);
    expect(score.recall).toBeGreaterThanOrEqual(0.97);
    expect(score.wrongRule.map((result) => result.row.command)).toEqual([]);
  });

  it("covers every destructive rule with at least one labelled row", () => {
    const labelled = new Set(rows.map((row) => row.rule));
    for (const id of DESTRUCTIVE_RULE_IDS) expect(labelled.has(id), id).toBe(true);
  });
});
