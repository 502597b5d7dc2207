import sqlParser from "node-sql-parser";
import type { DestructiveFinding } from "../command-analysis.ts";
import { leadingKeywords, splitSqlStatements } from "./sql-statements.ts";

/**
 * SQL statements understood by node-sql-parser. A script is split into statements first
 * (sql-statements.ts); each is parsed with the dialects below in order and the first one that
 * accepts it wins. We do not fall back to keyword matching over the text, which is what makes
 * `SELECT 'DROP TABLE x'` and `grep "DROP TABLE"` safe, with one exception that fails closed: a
 * statement no dialect reads (node-sql-parser knows no `DROP SCHEMA … CASCADE`, `DROP ROLE`, …)
 * whose own leading keyword is DROP or TRUNCATE is judged by that keyword. Those two are
 * destructive whatever follows; DELETE and UPDATE are not guessed (their WHERE decides).
 */
const { Parser } = sqlParser;
const parser = new Parser();
const DIALECTS = ["postgresql", "mysql", "sqlite", "mariadb", "transactsql", "snowflake"] as const;

interface StatementNode {
  readonly type?: unknown;
  readonly keyword?: unknown;
  readonly where?: unknown;
}

export function parseSqlStatements(sql: string): StatementNode[] | undefined {
  for (const database of DIALECTS) {
    try {
      const ast: unknown = parser.astify(sql, { database });
      const statements = Array.isArray(ast) ? ast : [ast];
      return statements.filter(
        (statement): statement is StatementNode => typeof statement === "object" && statement !== null,
      );
    } catch {
      // try the next dialect
    }
  }
  return undefined;
}

export function analyseSql(sql: string, command: string = sql): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  for (const text of splitSqlStatements(sql)) {
    const statements = parseSqlStatements(text);
    // A dialect that "accepts" a statement it does not know can return nodes without a type.
    if (
      statements === undefined ||
      statements.length === 0 ||
      statements.some((statement) => typeof statement.type !== "string")
    ) {
      const finding = unparsedStatementFinding(text, command);
      if (finding !== undefined) findings.push(finding);
      continue;
    }
    for (const statement of statements) {
      const type = String(statement.type).toLowerCase();
      if (type === "drop")
        findings.push({
          ruleId: "sql-drop",
          command,
          path: undefined,
          detail: `DROP ${String(statement.keyword ?? "").toUpperCase()}`.trim(),
        });
      else if (type === "truncate")
        findings.push({ ruleId: "sql-truncate", command, path: undefined, detail: "TRUNCATE" });
      else if (type === "delete" && isUnbounded(statement.where))
        findings.push({
          ruleId: "sql-delete-without-where",
          command,
          path: undefined,
          detail: "DELETE without a restricting WHERE",
        });
      else if (type === "update" && isUnbounded(statement.where))
        findings.push({
          ruleId: "sql-update-without-where",
          command,
          path: undefined,
          detail: "UPDATE without a restricting WHERE",
        });
    }
  }
  return findings;
}

/** The fail-closed reading of a statement no parser dialect reads: by its leading keyword only. */
function unparsedStatementFinding(statement: string, command: string): DestructiveFinding | undefined {
  const [verb, object] = leadingKeywords(statement, 2);
  const why = "statement read by its leading keywords: the SQL parser does not know it";
  if (verb === "DROP")
    return {
      ruleId: "sql-drop",
      command,
      path: undefined,
      detail: `${object === undefined ? "DROP" : `DROP ${object}`} (${why})`,
    };
  if (verb === "TRUNCATE") return { ruleId: "sql-truncate", command, path: undefined, detail: `TRUNCATE (${why})` };
  return undefined;
}

/** No WHERE, or one that is a constant truth (`WHERE true`, `WHERE 1=1`, `WHERE 'a'='a'`). */
function isUnbounded(where: unknown): boolean {
  if (where === null || where === undefined) return true;
  if (typeof where !== "object") return false;
  const node = where as { type?: unknown; value?: unknown; operator?: unknown; left?: unknown; right?: unknown };
  if (node.type === "bool") return node.value === true;
  if (node.type === "binary_expr" && node.operator === "=") {
    const left = node.left as { type?: unknown; value?: unknown } | undefined;
    const right = node.right as { type?: unknown; value?: unknown } | undefined;
    const isLiteral = (side: { type?: unknown } | undefined): boolean =>
      side !== undefined && ["number", "single_quote_string", "string", "bool"].includes(String(side.type));
    return isLiteral(left) && isLiteral(right) && left?.value === right?.value;
  }
  if (node.type === "binary_expr" && String(node.operator).toUpperCase() === "OR")
    return isUnbounded(node.left) || isUnbounded(node.right);
  return false;
}

/** Statements that change data or schema (anything but SELECT/SHOW/EXPLAIN/...): for redundancy. */
export function sqlChangesState(sql: string): boolean {
  const statements = parseSqlStatements(sql);
  if (statements === undefined) return true;
  return statements.some(
    (statement) =>
      !["select", "show", "explain", "desc", "describe"].includes(String(statement.type ?? "").toLowerCase()),
  );
}
