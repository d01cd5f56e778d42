// The dashboard's two ways of making page content: h (one element) and dataTable (a table of rows). Both put
// what they are given into the page as text or as elements, never as markup: a user's command, tag, param or
// log line can show `<b>` but never make one.

/** What an element may hold: an element, text (numbers as text), or nothing. */
export type Child = Node | string | number | null | undefined | false;
/** An element's attributes; a function is a listener (`onclick` listens to `click`), true an empty attribute. */
export type Attrs = Record<string, string | number | boolean | EventListener | undefined>;

/** One element with attributes and children (text as text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'number' ? String(c) : c);
  return el;
}

/** A column of a data table: its head once, and what it shows of each row. */
export interface Column<R> {
  /** The head's text. */
  head: string;
  /** The row's cell: text or an element. */
  cell: (row: R) => Child;
  /** The cells' class (e.g. `num`: right-aligned figures). */
  class?: string;
  /** A cell's hover text. */
  title?: (row: R) => string | undefined;
  /** The head cell's attributes (e.g. a sort key and a click to sort by it). */
  th?: Attrs;
}

/** A table of `rows` with `columns` (marked `data-testid`), each row's `tr` given `rowAttrs`. */
export function dataTable<R>(
  testid: string,
  columns: readonly Column<R>[],
  rows: readonly R[],
  rowAttrs: (row: R) => Attrs = () => ({}),
): HTMLTableElement {
  return h(
    'table',
    { 'data-testid': testid },
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', c.th ?? {}, c.head)))),
    h(
      'tbody',
      {},
      ...rows.map((r) =>
        h(
          'tr',
          rowAttrs(r),
          ...columns.map((c) => h('td', { class: c.class, title: c.title?.(r) }, c.cell(r))),
        ),
      ),
    ),
  );
}
