/** How a table fits a terminal: its width, and which columns may wrap onto more lines to fit. */
export interface TableLayout {
  readonly width?: number;
  readonly wrap?: readonly number[];
}

/** The narrowest a wrapping column is made before the table is allowed to overflow. */
const MIN_WRAPPED_WIDTH = 12;

/** Splits text into lines of at most `width` characters, at spaces where it can, hard elsewhere. */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    let rest = word;
    while (rest.length > width) {
      if (line !== "") lines.push(line);
      lines.push(rest.slice(0, width));
      rest = rest.slice(width);
      line = "";
    }
    if (line === "") line = rest;
    else if (line.length + 1 + rest.length <= width) line = `${line} ${rest}`;
    else {
      lines.push(line);
      line = rest;
    }
  }
  lines.push(line);
  return lines;
}

/**
 * A plain-text table: fixed-width columns, readable in a terminal and in CI logs. Given a width,
 * the widest wrappable columns are narrowed (never below their header or 12 characters) until the
 * table fits, and their cells continue on the following lines.
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  layout: TableLayout = {},
): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const floor = (column: number): number => Math.max(headers[column]?.length ?? 0, MIN_WRAPPED_WIDTH);
  const total = (): number => widths.reduce((sum, width) => sum + width, 0) + 2 * (widths.length - 1);
  const wrap = layout.wrap ?? [];
  if (layout.width !== undefined) {
    // One character at a time from the widest wrappable column, so the wrapped columns end up
    // about equally wide rather than one of them squeezed to its floor.
    while (total() > layout.width) {
      const widest = wrap
        .filter((column) => (widths[column] ?? 0) > floor(column))
        .sort((a, b) => (widths[b] ?? 0) - (widths[a] ?? 0))[0];
      if (widest === undefined) break;
      widths[widest] = (widths[widest] ?? 0) - 1;
    }
  }
  // Numbers (and n/m fractions) align right, text aligns left; a wrapped cell keeps its alignment.
  const numeric = (cell: string): boolean => /^-?[\d.,/ ]+$/.test(cell);
  const pad = (text: string, column: number, right: boolean): string =>
    right ? text.padStart(widths[column] ?? 0) : text.padEnd(widths[column] ?? 0);
  const line = (cells: readonly string[], right: readonly boolean[]): string =>
    cells
      .map((cell, column) => pad(cell, column, right[column] ?? false))
      .join("  ")
      .trimEnd();
  const physical = (cells: readonly string[]): string[] => {
    const right = cells.map(numeric);
    const wrapped = cells.map((cell, column) =>
      wrap.includes(column) ? wrapText(cell, widths[column] ?? cell.length) : [cell],
    );
    const height = Math.max(...wrapped.map((lines) => lines.length));
    return Array.from({ length: height }, (_, index) =>
      line(
        wrapped.map((lines) => lines[index] ?? ""),
        right,
      ),
    );
  };
  return [line(headers, []), widths.map((width) => "-".repeat(width)).join("  "), ...rows.flatMap(physical)].join("\n");
}
