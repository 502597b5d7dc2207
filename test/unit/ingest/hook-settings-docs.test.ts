import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";

/**
 * The settings.json examples of docs/ingest.md against Claude Code's hook settings as its hooks
 * reference documents them (code.claude.com/docs/en/hooks): a command hook has `command` and an
 * optional `timeout` in seconds; an http hook has `url`, and optionally `timeout`, `headers` and
 * `allowedEnvVars`. Objects are strict, so a field the reference does not name fails the test.
 */
const commandHook = z.strictObject({
  type: z.literal("command"),
  command: z.string().min(1),
  timeout: z.number().positive().optional(),
});
const httpHook = z.strictObject({
  type: z.literal("http"),
  url: z.url({ protocol: /^https?$/ }),
  timeout: z.number().positive().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  allowedEnvVars: z.array(z.string().min(1)).optional(),
});
const matcherGroup = z.strictObject({
  matcher: z.string().optional(),
  hooks: z.array(z.discriminatedUnion("type", [commandHook, httpHook])).min(1),
});
const settings = z.strictObject({
  hooks: z.strictObject({
    PreToolUse: z.array(matcherGroup).min(1),
    PostToolUse: z.array(matcherGroup).optional(),
    PostToolUseFailure: z.array(matcherGroup).optional(),
  }),
});

function documentedExamples(): unknown[] {
  const doc = readFileSync(new URL("../../../docs/ingest.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf("### settings.json"));
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1] ?? "") as unknown);
}

describe("docs/ingest.md settings.json examples", () => {
  it("are a command hook running `agentops hook claude-code`, the same with the loop guard, and an http hook to the --listen address", () => {
    const examples = documentedExamples().map((example) => settings.parse(example));
    const hooks = examples.flatMap((example) => example.hooks.PreToolUse.flatMap((group) => group.hooks));
    expect(hooks.map((hook) => hook.type)).toEqual(["command", "command", "http"]);
    const [command, guarded, http] = hooks;
    expect(command?.type === "command" && /\bbin\/agentops hook claude-code$/.test(command.command)).toBe(true);
    expect(http?.type === "http" ? http.url : undefined).toBe("http://127.0.0.1:4319/");
    // The loop guard's results come from the two result events, to the very same command.
    const guardedCommand = guarded?.type === "command" ? guarded.command : "";
    expect(guardedCommand).toMatch(/\bbin\/agentops hook claude-code --loop-guard (ask|deny)$/);
    const results = examples[1]?.hooks;
    const resultCommands = [...(results?.PostToolUse ?? []), ...(results?.PostToolUseFailure ?? [])].flatMap(
      (group) => group.hooks,
    );
    expect(resultCommands.map((hook) => (hook.type === "command" ? hook.command : hook.url))).toEqual([
      guardedCommand,
      guardedCommand,
    ]);
  });

  it("the schema rejects a field the reference does not document (e.g. a fail-closed switch)", () => {
    const hook = { type: "http", url: "http://127.0.0.1:4319/", onFailure: "block" };
    const invented = { hooks: { PreToolUse: [{ hooks: [hook] }] } };
    expect(settings.safeParse(invented).success).toBe(false);
  });
});
