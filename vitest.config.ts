import { defineConfig } from "vitest/config";

/**
 * Two projects: `unit` (pure code, no services, fast) and `integration` (a real Kafka broker and
 * schema registry, found or started by test/support/global-setup.ts). `npm test` runs both;
 * `npm run test:unit` runs only the first.
 */
export default defineConfig({
  test: {
    teardownTimeout: 120_000,
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.{test,spec}.ts", "test/property/**/*.{test,spec}.ts"],
          environment: "node",
          // The unit files run while the integration project starts and uses two JVMs on the same
          // two cores: a test of LMDB state that takes 2 s on a quiet machine took just over
          // vitest's default 5 s there (entity-docs.test.ts, in CI). A hang still fails.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.{test,spec}.ts", "test/fault/**/*.{test,spec}.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          // Two JVMs share the machine with the tests: generous time-outs, one file at a time.
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: "forks",
          fileParallelism: false,
          maxWorkers: 1,
        },
      },
    ],
  },
});
