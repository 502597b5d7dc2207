import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { ConfigError } from "../errors.ts";

/*
 * kafkajs is CommonJS, and each of its modules takes what it requires once, when it is first
 * loaded. A module of kafkajs can therefore be replaced by putting other exports in its entry of
 * Node's module cache before the modules that require it are loaded: src/kafka/kafkajs.ts imports
 * the replacements (kafkajs-grouping.ts, kafkajs-crc32c.ts) before kafkajs itself. Replacements
 * apply to the one kafkajs version they were written against; another version is left as it is.
 */

/** The kafkajs version whose modules are replaced (package.json pins it). */
export const PATCHED_KAFKAJS_VERSION = "2.2.4";

const require = createRequire(import.meta.url);

/** The path of a kafkajs module (`src/…`), when the installed kafkajs is the version the replacements were written for. */
export function kafkajsModule(relativePath: string): string | undefined {
  const version = (require("kafkajs/package.json") as { version: string }).version;
  if (version !== PATCHED_KAFKAJS_VERSION) return undefined;
  return require.resolve(`kafkajs/${relativePath}`);
}

/** The exports kafkajs' module `relativePath` has in this process (a replacement where one was put). Throws for another kafkajs version. */
export function kafkajsLoaded<T>(relativePath: string): T {
  const modulePath = kafkajsModule(relativePath);
  if (modulePath === undefined)
    throw new ConfigError({
      field: "kafkajs",
      problem: `is not ${PATCHED_KAFKAJS_VERSION}, the version whose ${relativePath} this reads`,
      fix: "reinstall the version package.json pins (npm ci)",
    });
  return require(modulePath) as T;
}

/**
 * Replaces the exports of kafkajs' module `relativePath` with `exports`, unless one of `users` (the
 * kafkajs modules that require it) is loaded already: they would keep the original. True when
 * kafkajs will use the replacement.
 */
export function replaceKafkajsModule(relativePath: string, exports: unknown, users: readonly string[]): boolean {
  const modulePath = kafkajsModule(relativePath);
  if (modulePath === undefined) return false;
  if (users.some((user) => require.cache[require.resolve(`kafkajs/${user}`)] !== undefined)) return false;
  // Loading it first creates its cache entry; its exports are then replaced before its users require it.
  require(modulePath);
  const cached = require.cache[modulePath];
  if (cached === undefined) return false;
  cached.exports = exports;
  return true;
}

/**
 * kafkajs' own exports of a module it replaced, compiled from its file (its cache entry holds the
 * replacement), with the module's relative requires compiled the same way: for the tests and
 * benchmarks that compare a replacement with the original. Throws for another kafkajs version.
 */
export function kafkajsOriginal<T>(relativePath: string): T {
  const modulePath = kafkajsModule(relativePath);
  if (modulePath === undefined)
    throw new ConfigError({
      field: "kafkajs",
      problem: `is not ${PATCHED_KAFKAJS_VERSION}, the version whose ${relativePath} was replaced`,
      fix: "reinstall the version package.json pins (npm ci)",
    });
  const compile = (file: string): unknown => {
    if (file.endsWith(".json")) return require(file);
    const module = { exports: {} as unknown };
    const localRequire = (name: string): unknown =>
      name.startsWith(".") ? compile(require.resolve(resolve(dirname(file), name))) : require(name);
    new Function("module", "exports", "require", readFileSync(file, "utf8"))(module, module.exports, localRequire);
    return module.exports;
  };
  return compile(modulePath) as T;
}
