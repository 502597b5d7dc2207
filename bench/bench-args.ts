/** The whole number (at least 1) after `name` in a benchmark's arguments, or `fallback` when it is absent; anything else stops the benchmark. */
export function wholeNumberOption(argv: readonly string[], name: string, fallback: number): number {
  if (!argv.includes(name)) return fallback;
  const value = Number(argv[argv.indexOf(name) + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a whole number of at least 1`);
  return value;
}
