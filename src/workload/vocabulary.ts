/**
 * The small, fixed world the workload lives in: few role templates and few attribution tuples, so
 * every cohort of the default sample reaches the catalog's minimum_sample of 20.
 */
export interface Tuple {
  readonly provider: string;
  readonly model: string;
  readonly role: string;
  readonly runtime: string;
  /** The currency this provider bills the project in (costs are never converted). */
  readonly currency: string;
  /** Price per million input / output tokens, in the currency's minor units. */
  readonly inputPrice: number;
  readonly outputPrice: number;
}

export const WRITER_TUPLES: readonly (readonly [Tuple, number])[] = [
  [
    {
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      role: "writer",
      runtime: "claude-code@2.0",
      currency: "USD",
      inputPrice: 300,
      outputPrice: 1500,
    },
    0.6,
  ],
  [
    {
      provider: "google",
      model: "gemini-2.5-pro",
      role: "writer",
      runtime: "gemini-cli@0.9",
      currency: "JPY",
      inputPrice: 190,
      outputPrice: 1500,
    },
    0.4,
  ],
];

export const REVIEWER_TUPLES: readonly (readonly [Tuple, number])[] = [
  [
    {
      provider: "openai",
      model: "gpt-5-codex",
      role: "reviewer",
      runtime: "codex-cli@0.40",
      currency: "EUR",
      inputPrice: 115,
      outputPrice: 920,
    },
    0.45,
  ],
  [
    {
      provider: "anthropic",
      model: "claude-opus-4-1",
      role: "reviewer",
      runtime: "claude-code@2.0",
      currency: "USD",
      inputPrice: 1500,
      outputPrice: 7500,
    },
    0.55,
  ],
];

/** The evaluation judge: its calls are not the agent's own work (operational = false). */
export const JUDGE_TUPLE: Tuple = {
  provider: "openai",
  model: "gpt-5-mini",
  role: "judge",
  runtime: "eval-harness@1.2",
  currency: "USD",
  inputPrice: 25,
  outputPrice: 200,
};

export const ROLE_TEMPLATES: readonly (readonly [string, number])[] = [
  ["writer-reviewer@3", 0.55],
  ["solo-writer@1", 0.45],
];

/** Exact workflow stage ids (C56): never parsed or ordered by the engine. */
export const STAGES = ["plan", "implement", "test", "review", "merge"] as const;

export const COST_BASES = {
  listPrice: "list-price-2026-09",
  contract: "enterprise-contract-2026",
  hostMetered: "host-metered-v2",
  sandbox: "sandbox-minutes",
} as const;

export const REPOSITORIES = ["payments-api", "web-console", "ingest-worker", "auth-service", "docs-site"] as const;

export const SOURCE_FILES = [
  "src/index.ts",
  "src/server.ts",
  "src/routes/orders.ts",
  "src/routes/users.ts",
  "src/db/schema.ts",
  "src/db/migrations/0042_add_index.sql",
  "src/lib/retry.ts",
  "src/lib/money.ts",
  "test/orders.test.ts",
  "test/users.test.ts",
  "README.md",
  "package.json",
] as const;

export const SEARCH_TERMS = ["TODO", "retryPolicy", "parseAmount", "userId", "deprecated", "timeout"] as const;

export const NETWORK_TARGETS = [
  "https://registry.npmjs.org/zod",
  "https://api.github.com/repos/acme/payments-api/pulls",
  "https://docs.python.org/3/library/json.html",
  "pypi.org",
] as const;

export const BENIGN_SQL = [
  "SELECT count(*) FROM users",
  "SELECT id, status FROM orders WHERE created_at > now() - interval '1 day'",
  "UPDATE orders SET status = 'shipped' WHERE id = 4711",
  "DELETE FROM sessions WHERE expires_at < now()",
] as const;

export const BENIGN_EXEC = [
  "npm test",
  "npm run lint",
  "npx tsc -p tsconfig.json",
  "ls -la src",
  "rm -rf node_modules/.cache",
  "cat package.json",
  "node scripts/seed.js",
] as const;

export const BENIGN_GIT = [
  "git status",
  "git diff --stat",
  "git add src",
  'git commit -m "fix: handle empty cart"',
  "git push origin HEAD:refs/heads/agent/fix-cart",
  "git checkout -b agent/fix-cart",
] as const;

/** The few destructive actions the tripwires must catch, mixed in among many benign ones. */
export const DESTRUCTIVE_ACTIONS = [
  { kind: "exec", command: "rm -rf /" },
  { kind: "git", command: "git push --force origin main" },
  { kind: "sql", command: "DROP TABLE users" },
] as const;
