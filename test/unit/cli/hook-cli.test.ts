import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/command.ts";
import { hookCommand } from "../../../src/cli/commands/hook.ts";

/** `agentops hook claude-code` refuses a bad flag before it reads the hook input from stdin. */
async function usageErrorOf(argv: readonly string[]): Promise<UsageError> {
  const error: unknown = await hookCommand.run([...argv]).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof UsageError)) throw new Error(`expected a UsageError, got ${String(error)}`);
  return error;
}

describe("agentops hook claude-code --loop-guard-after", () => {
  it.each([
    [["--loop-guard", "ask", "--loop-guard-after", "1"], "1 is outside 2..64"],
    [["--loop-guard", "deny", "--loop-guard-after", "65"], "65 is outside 2..64"],
    [["--loop-guard", "ask", "--loop-guard-after", "three"], '"three" is not a whole number'],
  ])("%j is refused, naming the flag and the range", async (flags, problem) => {
    const error = await usageErrorOf(["claude-code", ...flags]);
    expect(error.field).toBe("--loop-guard-after");
    expect(error.message).toBe(
      `--loop-guard-after: ${problem}. Fix: give a whole number from 2 to 64, e.g. --loop-guard-after 4`,
    );
  });

  it("without --loop-guard it would do nothing: refused, with the flag to add", async () => {
    const error = await usageErrorOf(["claude-code", "--loop-guard-after", "3"]);
    expect(error.message).toBe(
      "--loop-guard-after: is set but the loop guard is off. " +
        "Fix: add --loop-guard ask (or deny), e.g. --loop-guard ask --loop-guard-after 3",
    );
  });
});
