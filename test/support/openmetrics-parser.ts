/**
 * A strict parser for the OpenMetrics text format subset the exporter writes (gauge, stateset,
 * info; no timestamps or exemplars), written from the specification's ABNF: it throws on anything
 * a conforming parser would reject, so a test that parses the exporter's output checks its syntax.
 */

export interface ParsedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface ParsedFamily {
  readonly name: string;
  readonly type: string;
  readonly help: string | undefined;
  readonly samples: ParsedSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const REAL_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const TYPES = new Set(["gauge", "counter", "stateset", "info", "histogram", "gaugehistogram", "summary", "unknown"]);

function fail(lineNumber: number, problem: string): never {
  throw new Error(`line ${lineNumber}: ${problem}`);
}

function parseNumber(text: string, lineNumber: number): number {
  if (REAL_NUMBER.test(text)) return Number(text);
  if (/^[+-]?Inf$/.test(text)) return text.startsWith("-") ? -Infinity : Infinity;
  if (text === "NaN") return Number.NaN;
  return fail(lineNumber, `"${text}" is not a number`);
}

/** Reads `{name="value",...}` from `text` at `start`; returns the labels and the index after `}`. */
function parseLabels(text: string, start: number, lineNumber: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let index = start + 1;
  if (text[index] === "}") return { labels, end: index + 1 };
  for (;;) {
    const nameMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(index));
    if (nameMatch === null) fail(lineNumber, `expected a label name at column ${index + 1}`);
    const name = nameMatch[0];
    index += name.length;
    if (text.slice(index, index + 2) !== '="') fail(lineNumber, `expected =" after label ${name}`);
    index += 2;
    let value = "";
    for (;;) {
      const char = text[index];
      if (char === undefined) fail(lineNumber, `unterminated value of label ${name}`);
      if (char === '"') break;
      if (char === "\n") fail(lineNumber, `raw line feed in label ${name}`);
      if (char === "\\") {
        const next = text[index + 1];
        if (next === "\\") value += "\\";
        else if (next === '"') value += '"';
        else if (next === "n") value += "\n";
        else fail(lineNumber, `invalid escape \\${next ?? ""} in label ${name}`);
        index += 2;
        continue;
      }
      value += char;
      index += 1;
    }
    index += 1;
    if (Object.hasOwn(labels, name)) fail(lineNumber, `label ${name} repeated`);
    labels[name] = value;
    if (text[index] === "}") return { labels, end: index + 1 };
    if (text[index] !== ",") fail(lineNumber, `expected , or } after label ${name}`);
    index += 1;
  }
}

/** The family a sample name belongs to, by the suffixes its type allows. */
function familyOf(sample: string, family: ParsedFamily | undefined): boolean {
  if (family === undefined) return false;
  if (family.type === "info") return sample === `${family.name}_info`;
  if (family.type === "counter") return sample === `${family.name}_total` || sample === `${family.name}_created`;
  return sample === family.name;
}

export function parseOpenMetrics(text: string): ParsedFamily[] {
  if (!text.endsWith("# EOF\n") && !text.endsWith("# EOF")) throw new Error("the exposition does not end with # EOF");
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const families: ParsedFamily[] = [];
  const seen = new Set<string>();
  const seriesSeen = new Set<string>();
  let current: ParsedFamily | undefined;
  lines.forEach((line, offset) => {
    const lineNumber = offset + 1;
    if (line === "# EOF") {
      if (offset !== lines.length - 1) fail(lineNumber, "# EOF before the end");
      return;
    }
    if (line.startsWith("#")) {
      const match = /^# (TYPE|HELP|UNIT) ([^ ]+)(?: (.*))?$/.exec(line);
      if (match === null) fail(lineNumber, `not a TYPE, HELP or UNIT line: ${line}`);
      const [, keyword, name = "", rest = ""] = match;
      if (!METRIC_NAME.test(name)) fail(lineNumber, `bad metric name ${name}`);
      if (current?.name !== name) {
        if (seen.has(name)) fail(lineNumber, `family ${name} is interleaved with another`);
        current = { name, type: "unknown", help: undefined, samples: [] };
        seen.add(name);
        families.push(current);
      } else if (current.samples.length > 0) fail(lineNumber, `metadata for ${name} after its samples`);
      if (keyword === "TYPE") {
        if (!TYPES.has(rest)) fail(lineNumber, `unknown type ${rest}`);
        (current as { type: string }).type = rest;
      } else if (keyword === "HELP") {
        if (/\\[^\\n"]/.test(rest)) fail(lineNumber, "invalid escape in HELP");
        (current as { help: string | undefined }).help = rest;
      }
      return;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (nameMatch === null) fail(lineNumber, `not a sample: ${line}`);
    const name = nameMatch[0];
    if (!familyOf(name, current)) fail(lineNumber, `sample ${name} outside its family's block`);
    let index = name.length;
    let labels: Record<string, string> = {};
    if (line[index] === "{") ({ labels, end: index } = parseLabels(line, index, lineNumber));
    if (line[index] !== " ") fail(lineNumber, "expected one space before the value");
    const rest = line.slice(index + 1).split(" ");
    if (rest.length !== 1) fail(lineNumber, "timestamps and exemplars are not expected here");
    const value = parseNumber(rest[0] ?? "", lineNumber);
    for (const label of Object.keys(labels)) if (!LABEL_NAME.test(label)) fail(lineNumber, `bad label name ${label}`);
    const family = current as ParsedFamily;
    if (family.type === "stateset") {
      if (labels[family.name] === undefined) fail(lineNumber, `stateset sample without its ${family.name} label`);
      if (value !== 0 && value !== 1) fail(lineNumber, "a stateset value is 0 or 1");
    }
    if (family.type === "info" && value !== 1) fail(lineNumber, "an info value is 1");
    const identity = `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
    if (seriesSeen.has(identity)) fail(lineNumber, `duplicate series ${identity}`);
    seriesSeen.add(identity);
    family.samples.push({ name, labels, value });
  });
  return families;
}
