import type { DestructiveFinding } from "../command-analysis.ts";
import { commandBaseName, joinWords, optionValue } from "../command-words.ts";
import type { ShellWord, SimpleCommand } from "../parsed-shell.ts";
import { analyseSql } from "./sql-analysis.ts";

/**
 * SQL carried by database clients: `psql -c`, `mysql -e`, `sqlite3 db "SQL"`, a here-document or
 * here-string, or `echo "SQL" | psql`. `dropdb` drops a database without any SQL.
 */
const SQLITE_OPTIONS_WITH_VALUE = new Set([
  "-cmd",
  "-separator",
  "-newline",
  "-nullvalue",
  "-init",
  "-vfs",
  "-maxsize",
  "-mmap",
  "-pagecache",
  "-lookaside",
]);

export function sqlCommandFindings(
  name: string,
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  command: SimpleCommand,
): DestructiveFinding[] {
  const label = joinWords(words);
  if (name === "dropdb")
    return [{ ruleId: "sql-drop", command: label, path: undefined, detail: "dropdb drops a database" }];
  const statements = sqlOf(name, args, command);
  return statements.flatMap((sql) => analyseSql(sql, label));
}

function sqlOf(name: string, args: readonly ShellWord[], command: SimpleCommand): string[] {
  let inline: string[];
  switch (name) {
    case "psql":
      inline = collectAll(args, "-c", "--command");
      break;
    case "mysql":
    case "mariadb":
      inline = collectAll(args, "-e", "--execute");
      break;
    case "sqlite3":
    case "sqlite":
      inline = sqliteStatements(args);
      break;
    default:
      return [];
  }
  if (inline.length > 0) return inline;
  if (command.stdinText !== undefined) return [command.stdinText];
  const producer = command.pipedFrom;
  const producerName = commandBaseName(producer?.words[0]);
  if (
    producer !== undefined &&
    (producerName === "echo" || producerName === "printf") &&
    producer.words.every((word) => !word.dynamic)
  ) {
    return [
      producer.words
        .slice(1)
        .filter((word) => !/^-[neE]+$/.test(word.text))
        .map((word) => word.text)
        .join(" "),
    ];
  }
  return [];
}

function collectAll(args: readonly ShellWord[], short: string, long: string): string[] {
  const values: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const single = optionValue(args.slice(index, index + 2), short.slice(1), long.slice(2));
    const text = args[index]?.text ?? "";
    if (
      single !== undefined &&
      (text === short ||
        text === long ||
        text.startsWith(`${long}=`) ||
        (text.startsWith(short) && !text.startsWith("--")))
    )
      values.push(single);
  }
  return values;
}

function sqliteStatements(args: readonly ShellWord[]): string[] {
  const positionals: string[] = [];
  const commands: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const text = args[index]?.text ?? "";
    if (SQLITE_OPTIONS_WITH_VALUE.has(text)) {
      if (text === "-cmd") commands.push(args[index + 1]?.text ?? "");
      index++;
    } else if (!text.startsWith("-")) {
      positionals.push(text);
    }
  }
  // sqlite3 [OPTIONS] FILENAME [SQL...]
  return [...commands, ...positionals.slice(1)];
}
