/**
 * The CLI's tables (cli-table3, without colours), sized for a terminal.
 *
 * A listing (`listTable`) fits {@link TABLE_WIDTH} columns by default: it leaves out the columns
 * marked `wideOnly`, and when it is still too wide it shortens the values of the columns that may
 * be shortened, the widest first and never below their `min`, with an ellipsis. An id is shortened
 * in its middle (its start and end stay) and only as far as the ids shown stay distinct, so a
 * shortened id still tells its row from the others; `--wide` (or `--json`) gives every value whole.
 * A record shown field by field (`fieldTable`) wraps a long value over several lines instead, so
 * nothing of it is lost. With `wide`, every column is shown and nothing is shortened or wrapped.
 *
 * Widths are counted in code points: what the CLI prints is ASCII apart from the borders and the
 * ellipsis, each one column wide.
 */
import Table from 'cli-table3';

/** The width a table fits by default: a common terminal, and what most log viewers show. */
export const TABLE_WIDTH = 120;

/** A column of a listing: its heading and how a narrow table treats it. */
export interface Column {
  readonly head: string;
  /** Shown only with `--wide`. */
  readonly wideOnly?: boolean;
  /**
   * How a value that does not fit is shortened: `end` (free text: its start stays) or `middle`
   * (an id: its start and end stay); without it the value is never shortened.
   */
  readonly shorten?: 'end' | 'middle';
  /** The narrowest a shortened value gets, in characters (default 12). */
  readonly min?: number;
}

type Cell = string | number;

/** The visible width of a text without colours: its code points. */
export function visibleWidth(text: string): number {
  return Array.from(text).length;
}

/** `text` cut to `width` characters with an ellipsis at its end or in its middle. */
export function shortened(text: string, width: number, where: 'end' | 'middle'): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  if (width <= 1) return '…';
  if (where === 'end') return `${chars.slice(0, width - 1).join('')}…`;
  const tail = Math.floor((width - 1) / 2);
  const head = width - 1 - tail;
  return `${chars.slice(0, head).join('')}…${chars.slice(chars.length - tail).join('')}`;
}

/** What a table of `widths` takes on a line: each column's padding and one border each side. */
function lineWidth(widths: readonly number[]): number {
  return widths.reduce((sum, w) => sum + w + 3, 1);
}

function render(head: readonly string[], rows: readonly string[][]): string {
  const t = new Table({ head: [...head], style: { head: [], border: [] } });
  for (const row of rows) t.push(row);
  return t.toString();
}

/**
 * A listing: one row per record. Narrow (the default), it fits `width` columns as the module
 * comment says, as far as the columns' `min` allow; `wide` shows every column and value whole.
 */
export function listTable(
  columns: readonly (Column | string)[],
  rows: readonly Cell[][],
  wide = false,
  width = TABLE_WIDTH,
): string {
  const all = columns.map((c): Column => (typeof c === 'string' ? { head: c } : c));
  const shown = all.flatMap((column, index) => (wide || column.wideOnly !== true ? [{ column, index }] : []));
  const cells = rows.map((row) =>
    shown.map(({ index }) => (wide ? String(row[index]) : oneLine(String(row[index] ?? '')))),
  );
  const head = shown.map(({ column }) => column.head);
  if (wide) return render(head, cells);
  const natural = shown.map((_, i) =>
    Math.max(visibleWidth(head[i]!), ...cells.map((row) => visibleWidth(row[i]!))),
  );
  const floor = shown.map(({ column }, i) =>
    column.shorten === undefined
      ? natural[i]!
      : Math.min(
          natural[i]!,
          Math.max(column.min ?? 12, visibleWidth(head[i]!), distinctWidth(column, cells, i)),
        ),
  );
  const widths = [...natural];
  let excess = lineWidth(widths) - width;
  while (excess > 0) {
    // The widest column still above its floor gives up one character.
    let pick = -1;
    for (let i = 0; i < widths.length; i += 1)
      if (widths[i]! > floor[i]! && (pick < 0 || widths[i]! > widths[pick]!)) pick = i;
    if (pick < 0) break;
    widths[pick]! -= 1;
    excess -= 1;
  }
  const fitted = cells.map((row) =>
    row.map((cell, i) => {
      const where = shown[i]!.column.shorten;
      return where === undefined ? cell : shortened(cell, widths[i]!, where);
    }),
  );
  return render(head, fitted);
}

/**
 * The narrowest a `middle` column's values can be shortened to and all stay distinct (values
 * that were equal stay equal); 0 for any other column.
 */
function distinctWidth(column: Column, cells: readonly string[][], i: number): number {
  if (column.shorten !== 'middle') return 0;
  const values = [...new Set(cells.map((row) => row[i]!))];
  const longest = Math.max(0, ...values.map(visibleWidth));
  for (let w = Math.min(column.min ?? 12, longest); w < longest; w += 1) {
    if (new Set(values.map((v) => shortened(v, w, 'middle'))).size === values.length) return w;
  }
  return longest;
}

/**
 * A record field by field (`field`, `value`). Narrow, a long value is wrapped over several lines
 * (at a space when there is one near the end of the line) so the table fits `width`; `wide`
 * leaves every value on its line.
 */
export function fieldTable(rows: readonly [string, Cell][], wide = false, width = TABLE_WIDTH): string {
  const head = ['field', 'value'];
  if (wide)
    return render(
      head,
      rows.map(([f, v]) => [f, String(v)]),
    );
  const fieldWidth = Math.max(visibleWidth(head[0]!), ...rows.map(([f]) => visibleWidth(f)));
  const valueWidth = Math.max(20, width - lineWidth([fieldWidth, 0]));
  return render(
    head,
    rows.map(([f, v]) => [f, wrapped(String(v), valueWidth)]),
  );
}

/** `text` in lines of at most `width` characters, broken at a space past half a line when there is one. */
export function wrapped(text: string, width: number): string {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let rest = [...paragraph];
    while (rest.length > width) {
      const space = rest.lastIndexOf(' ', width);
      const cut = space > width / 2 ? space : width;
      lines.push(rest.slice(0, cut).join('').trimEnd());
      rest = rest.slice(space > width / 2 ? cut + 1 : cut);
    }
    lines.push(rest.join(''));
  }
  return lines.join('\n');
}

/** Whitespace (newlines included) as single spaces: one line per row. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ');
}
