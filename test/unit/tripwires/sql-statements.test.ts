import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { analyseSql } from "../../../src/tripwires/commands/sql/sql-analysis.ts";
import { leadingKeywords, splitSqlStatements } from "../../../src/tripwires/commands/sql/sql-statements.ts";

describe("SQL lexer: statements and leading keywords", () => {
  it("splits at top-level semicolons only: not inside strings, quoted identifiers, dollar quotes or comments", () => {
    const script = `BEGIN; INSERT INTO t VALUES ('a;b', "c;d"); -- x; y\nDO $body$ BEGIN PERFORM 1; END $body$; /* ; */ COMMIT`;
    expect(splitSqlStatements(script)).toEqual([
      "BEGIN",
      `INSERT INTO t VALUES ('a;b', "c;d")`,
      "-- x; y\nDO $body$ BEGIN PERFORM 1; END $body$",
      "/* ; */ COMMIT",
    ]);
  });

  it("a doubled quote is an escaped quote, not the end of the string", () => {
    expect(splitSqlStatements("SELECT 'it''s; fine'; SELECT 2")).toEqual(["SELECT 'it''s; fine'", "SELECT 2"]);
  });

  it("reads leading keywords after comments, upper-cased, and stops at quoted text", () => {
    expect(leadingKeywords("  -- note\n /* c */ drop schema public cascade", 2)).toEqual(["DROP", "SCHEMA"]);
    expect(leadingKeywords(`DROP "schema"`, 2)).toEqual(["DROP"]);
    expect(leadingKeywords("SELECT 'DROP TABLE x'", 2)).toEqual(["SELECT"]);
  });
});

describe("SQL lexer on arbitrary text (property)", () => {
  const sqlish = fc
    .array(fc.constantFrom("DROP", " ", ";", "'", "''", '"', "`", "$$", "$t$", "--", "\n", "/*", "*/", "x", "TABLE"), {
      maxLength: 40,
    })
    .map((parts) => parts.join(""));
  it("never throws; statements are trimmed, non-empty pieces of the input, in order, with no top-level text lost but separators", () => {
    fc.assert(
      fc.property(fc.oneof(sqlish, fc.string()), (sql) => {
        const statements = splitSqlStatements(sql);
        let from = 0;
        for (const statement of statements) {
          expect(statement).toBe(statement.trim());
          expect(statement).not.toBe("");
          const at = sql.indexOf(statement, from);
          expect(at).toBeGreaterThanOrEqual(from);
          expect(sql.slice(from, at).replaceAll(";", "").trim()).toBe("");
          from = at + statement.length;
        }
        expect(sql.slice(from).replaceAll(";", "").trim()).toBe("");
        for (const statement of statements) expect(leadingKeywords(statement, 2).length).toBeLessThanOrEqual(2);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 100) },
    );
  });
});

describe("statements the SQL parser cannot read fail closed on DROP and TRUNCATE only", () => {
  it("DROP SCHEMA … CASCADE (unknown to node-sql-parser) is sql-drop", () => {
    expect(analyseSql("DROP SCHEMA public CASCADE").map((finding) => finding.ruleId)).toEqual(["sql-drop"]);
  });

  it("inside a transaction script, each statement is judged on its own", () => {
    const findings = analyseSql("BEGIN; DROP SCHEMA public CASCADE; CREATE SCHEMA public; COMMIT;");
    expect(findings.map((finding) => [finding.ruleId, finding.detail])).toEqual([
      ["sql-drop", "DROP SCHEMA (statement read by its leading keywords: the SQL parser does not know it)"],
    ]);
  });

  it("DROP ROLE, DROP EXTENSION and DROP SEQUENCE alert; a parsed DROP TABLE keeps its parsed detail", () => {
    expect(
      ["DROP ROLE bob", "DROP EXTENSION pgcrypto", "DROP SEQUENCE s"].map((sql) => analyseSql(sql)[0]?.ruleId),
    ).toEqual(["sql-drop", "sql-drop", "sql-drop"]);
    expect(analyseSql("DROP TABLE users")[0]?.detail).toBe("DROP TABLE");
  });

  it("unreadable statements that begin with anything else are not guessed (DELETE … USING, DO blocks, strings that mention DROP)", () => {
    expect(analyseSql("DELETE FROM t USING u WHERE t.id = u.id")).toEqual([]);
    expect(analyseSql("DO $$ BEGIN EXECUTE 'DROP TABLE x'; END $$")).toEqual([]);
    expect(analyseSql("SELECT 'DROP TABLE x'")).toEqual([]);
  });
});
