import sqlParser from "node-sql-parser";
import type { DestructiveFinding } from "./command-analysis.ts";

/**
 * SQL statements understood by node-sql-parser. The statement is parsed with the dialects below in
 * order and the first one that accepts it wins; a statement no dialect accepts yields no finding
 * (documented limit: we do not fall back to keyword matching, which is what makes
 * `SELECT 'DROP TABLE x'` and `grep "DROP TABLE"` safe).
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
      return statements.filter((statement): statement is StatementNode => typeof statement === "object" && statement !== null);
    } catch {
      // try the next dialect
    }
  }
  return undefined;
}

export function analyseSql(sql: string, command: string = sql): DestructiveFinding[] {
  const statements = parseSqlStatements(sql);
  if (statements === undefined) return [];
  const findings: DestructiveFinding[] = [];
  for (const statement of statements) {
    const type = String(statement.type ?? "").toLowerCase();
    if (type === "drop") findings.push({ ruleId: "sql-drop", command, path: undefined, detail: `DROP ${String(statement.keyword ?? "").toUpperCase()}`.trim() });
    else if (type === "truncate") findings.push({ ruleId: "sql-truncate", command, path: undefined, detail: "TRUNCATE" });
    else if (type === "delete" && isUnbounded(statement.where)) findings.push({ ruleId: "sql-delete-without-where", command, path: undefined, detail: "DELETE without a restricting WHERE" });
    else if (type === "update" && isUnbounded(statement.where)) findings.push({ ruleId: "sql-update-without-where", command, path: undefined, detail: "UPDATE without a restricting WHERE" });
  }
  return findings;
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
    const isLiteral = (side: { type?: unknown } | undefined): boolean => side !== undefined && ["number", "single_quote_string", "string", "bool"].includes(String(side.type));
    return isLiteral(left) && isLiteral(right) && left?.value === right?.value;
  }
  if (node.type === "binary_expr" && String(node.operator).toUpperCase() === "OR") return isUnbounded(node.left) || isUnbounded(node.right);
  return false;
}

/** Statements that change data or schema (anything but SELECT/SHOW/EXPLAIN/...): for redundancy. */
export function sqlChangesState(sql: string): boolean {
  const statements = parseSqlStatements(sql);
  if (statements === undefined) return true;
  return statements.some((statement) => !["select", "show", "explain", "desc", "describe"].includes(String(statement.type ?? "").toLowerCase()));
}
