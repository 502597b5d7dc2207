import { commandBaseName } from "./command-words.ts";
import { UNKNOWN_ITEM } from "./fan-out.ts";
import { FETCH_SUBSTITUTION, isStdinPath } from "./indirect-execution.ts";
import type { ShellWord, SimpleCommand } from "./parsed-shell.ts";

const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "fish"]);

/**
 * `bash -c 'script'`, `eval "script"`, `echo 'script' | sh`, `source /dev/stdin <<< 'script'`: a
 * script given as data. A here-document holding a download is not read: indirect-execution.ts
 * judges it as a fetched script.
 */
export function nestedScript(name: string, args: readonly ShellWord[], command: SimpleCommand): string | undefined {
  if (name === "eval") return args.every((arg) => !arg.dynamic) ? args.map((arg) => arg.text).join(" ") : undefined;
  const sourcesStdin = (name === "source" || name === ".") && isStdinPath(args[0]?.text);
  if (!SHELLS.has(name) && !sourcesStdin) return undefined;
  const commandFlag = args.findIndex(
    (arg) => !arg.dynamic && /^-[a-z]*c[a-z]*$/i.test(arg.text) && !arg.text.startsWith("--"),
  );
  if (commandFlag !== -1) {
    const script = args.slice(commandFlag + 1).find((arg) => !arg.text.startsWith("-") || arg.dynamic);
    // A script with an unknown fan-out item in it is still read: the item parses as an unknown variable.
    return script === undefined || (script.dynamic && !script.text.includes(UNKNOWN_ITEM)) ? undefined : script.text;
  }
  const operand = args.find((arg) => !arg.text.startsWith("-"));
  const scriptOnStdin = sourcesStdin || operand === undefined || isStdinPath(operand.text);
  if (scriptOnStdin && command.stdinText !== undefined)
    return FETCH_SUBSTITUTION.test(command.stdinText) ? undefined : command.stdinText;
  const producer = command.pipedFrom;
  const producerName = commandBaseName(producer?.words[0]);
  if (
    scriptOnStdin &&
    producer !== undefined &&
    (producerName === "echo" || producerName === "printf") &&
    producer.words.every((word) => !word.dynamic)
  ) {
    return producer.words
      .slice(1)
      .map((word) => word.text)
      .join(" ");
  }
  // `cat <<EOF | sh`: the here-document is the script.
  if (
    scriptOnStdin &&
    producer !== undefined &&
    producerName === "cat" &&
    producer.words.length === 1 &&
    producer.stdinText !== undefined
  )
    return producer.stdinText;
  return undefined;
}
