import { UsageError } from "./command.ts";
import { commands } from "./commands/index.ts";

/** `--log-level debug|trace` (or AGENTOPS_LOG_LEVEL): connection failures then carry their stack trace. */
function wantsStackTraces(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const index = argv.indexOf("--log-level");
  const level =
    (index >= 0 ? argv[index + 1] : argv.find((arg) => arg.startsWith("--log-level="))?.slice("--log-level=".length)) ??
    env["AGENTOPS_LOG_LEVEL"];
  return level === "debug" || level === "trace";
}

async function topLevelHelp(): Promise<string> {
  const loaded = await Promise.all(commands.map(async (entry) => entry.load()));
  const width = Math.max(...loaded.map((command) => command.name.length), 8);
  const lines = loaded.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return [
    "Usage: agentops <command> [flags]",
    "",
    "Commands:",
    ...lines,
    "",
    "Run `agentops <command> --help` for a command's flags.",
  ].join("\n");
}

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(`${await topLevelHelp()}\n`);
    return name === undefined ? 2 : 0;
  }
  const entry = commands.find((candidate) => candidate.name === name);
  if (entry === undefined) {
    process.stderr.write(
      `agentops: unknown command "${name}". Fix: run \`agentops --help\` for the list of commands.\n`,
    );
    return 2;
  }
  const command = await entry.load();
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    // A bad flag or setting (exit 2), or a broker/registry that cannot be used (exit 1): the
    // message names the address, where it came from and the fix; no stack trace unless asked.
    // Loaded only on failure: their modules (effect) cost a command such as the hook its start time.
    const { ConfigError } = await import("../errors.ts");
    const { ConnectionFailure } = await import("../kafka/connection-failure.ts");
    if (error instanceof UsageError || error instanceof ConfigError) {
      process.stderr.write(`agentops ${command.name}: ${error.message}\n`);
      return 2;
    }
    if (error instanceof ConnectionFailure) {
      process.stderr.write(`agentops ${command.name}: ${error.render(wantsStackTraces(rest, process.env))}\n`);
      return 1;
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // A command that failed half-way may leave a client connection open (a producer refused by the
    // broker): it must not keep the process alive once the message is out.
    if (code !== 0) setTimeout(() => process.exit(code), 500).unref();
  },
  (error: unknown) => {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`agentops: unexpected failure: ${message}\n`);
    process.exitCode = 1;
  },
);
