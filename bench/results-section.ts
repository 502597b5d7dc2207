import { existsSync, readFileSync, writeFileSync } from "node:fs";

/** bench/RESULTS.md, shared by every benchmark: each owns one "## " section. */
export const RESULTS_FILE = new URL("./RESULTS.md", import.meta.url).pathname;

/** Hand-written findings below a generated table; kept when the section is regenerated. */
const ANALYSIS = "\n### Analysis";

/**
 * Replaces one benchmark's section of RESULTS.md (read right before writing, so concurrent
 * benchmarks of other sections are not overwritten), or appends it. An "### Analysis" part already
 * in the section is kept: it is prose about a run, written by a person.
 */
export function writeResultsSection(heading: string, section: string): void {
  const current = existsSync(RESULTS_FILE) ? readFileSync(RESULTS_FILE, "utf8") : "# Benchmark results\n";
  const start = current.indexOf(heading);
  if (start === -1) {
    writeFileSync(RESULTS_FILE, `${current.trimEnd()}\n\n${section.trimEnd()}\n`);
    return;
  }
  const next = current.indexOf("\n## ", start + heading.length);
  const old = current.slice(start, next === -1 ? current.length : next + 1);
  const analysis = old.indexOf(ANALYSIS);
  const kept = analysis === -1 ? "" : `\n${old.slice(analysis + 1).trimEnd()}\n`;
  const rest = next === -1 ? "" : `\n${current.slice(next + 1)}`;
  writeFileSync(RESULTS_FILE, `${current.slice(0, start)}${section.trimEnd()}\n${kept}${rest}`);
}

/** A benchmark's section printed, and written to RESULTS.md unless the run said not to (`--no-write`). */
export function publishResultsSection(
  heading: string,
  section: string,
  write: boolean,
  log: (message: string) => void,
): void {
  process.stdout.write(section.endsWith("\n") ? section : `${section}\n`);
  if (!write) return;
  writeResultsSection(heading, section);
  log("wrote section to bench/RESULTS.md");
}
