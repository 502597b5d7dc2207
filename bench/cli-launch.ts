/**
 * How bin/agentops launches the CLI, read from its shebang, so that benchmark children run as
 * users run them: the node flags (the heap bound) and the environment it sets (MALLOC_ARENA_MAX).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const SHEBANG_WORDS = (
  readFileSync(fileURLToPath(new URL("../bin/agentops", import.meta.url)), "utf8").split("\n")[0] ?? ""
).split(/\s+/);

/** The node flags the shebang gives the CLI. */
export const CLI_NODE_FLAGS: readonly string[] = SHEBANG_WORDS.filter((word) => word.startsWith("--"));

/** The V8 heap bound among them (--max-old-space-size=N), or "" if none. */
export const SHIPPED_HEAP_FLAG = CLI_NODE_FLAGS.find((flag) => flag.startsWith("--max-old-space-size=")) ?? "";

/** This process's environment with the shebang's assignments over it. */
export const CLI_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  ...Object.fromEntries(
    SHEBANG_WORDS.filter((word) => /^[A-Z_]+=/.test(word)).map((word) => [
      word.slice(0, word.indexOf("=")),
      word.slice(word.indexOf("=") + 1),
    ]),
  ),
};
