// The dashboard's ways of making page content: h (one element), dataTable (a table of rows) and morph (a redraw
// in place). They put what they are given into the page as text or as elements, never as markup: a user's
// command, tag, param or log line can show `<b>` but never make one.

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
    if (typeof v === 'function') listen(el, k.replace(/^on/, ''), v);
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

/** An element's listeners given to h, by event type: a redraw in place hands the new ones to the kept element. */
const LISTENERS = new WeakMap<Element, Map<string, EventListener>>();

/** The one listener h attaches: it calls the element's current listener for the event's type. */
function dispatch(this: Element, e: Event): void {
  LISTENERS.get(this)?.get(e.type)?.call(this, e);
}

/** `el` calls `fn` on each `type` event (through dispatch, so a redraw can hand it another). */
function listen(el: Element, type: string, fn: EventListener): void {
  const on = LISTENERS.get(el) ?? new Map<string, EventListener>();
  LISTENERS.set(el, on);
  on.set(type, fn);
  el.addEventListener(type, dispatch);
}

/** The attributes that name what an element shows: a kept element is the one with the same name. */
const KEYS = ['data-job', 'data-task', 'data-worker', 'data-pool', 'data-testid'] as const;

/** A node's name (`data-job=sweep`), or undefined for text and unnamed elements. */
function keyOf(n: Node): string | undefined {
  if (!(n instanceof Element)) return undefined;
  for (const k of KEYS) {
    const v = n.getAttribute(k);
    if (v !== null) return `${k}=${v}`;
  }
  return undefined;
}

/**
 * Make `parent`'s children look like `children`, keeping the elements already there: an element of the same tag
 * (and the same name, for a named one: a job's row stays that job's row) takes the new one's attributes, listeners
 * and children; only what differs is made anew. A live page redraws this way, so a click whose press and release
 * straddle a redraw still lands, and focus, hover and a text selection outside what changed stay.
 */
export function morph(parent: Element, ...children: Child[]): void {
  const next = children
    .filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c))));
  const old = [...parent.childNodes];
  const named = new Map<string, Node>();
  for (const o of old) {
    const k = keyOf(o);
    if (k !== undefined && !named.has(k)) named.set(k, o);
  }
  const used = new Set<Node>();
  next.forEach((n, i) => {
    const k = keyOf(n);
    // A named element keeps the old one of its name; an unnamed one the unnamed old one in its place.
    const candidate = k !== undefined ? named.get(k) : old[i];
    let placed = n;
    if (candidate && !used.has(candidate) && keyOf(candidate) === k && same(candidate, n)) {
      used.add(candidate);
      update(candidate, n);
      placed = candidate;
    }
    const at = parent.childNodes[i] ?? null;
    if (at !== placed) parent.insertBefore(placed, at);
  });
  while (parent.childNodes.length > next.length) parent.lastChild?.remove();
}

/** Whether `a` can be kept to show `b`: both text, or elements of one tag (an input of one type). */
function same(a: Node, b: Node): boolean {
  if (a.nodeType !== b.nodeType) return false;
  if (!(a instanceof Element && b instanceof Element)) return a.nodeType === Node.TEXT_NODE;
  return a.tagName === b.tagName && a.getAttribute('type') === b.getAttribute('type');
}

/** `kept` takes `n`'s text, or its attributes, listeners and children. */
function update(kept: Node, n: Node): void {
  if (!(kept instanceof Element && n instanceof Element)) {
    if (kept.nodeValue !== n.nodeValue) kept.nodeValue = n.nodeValue;
    return;
  }
  for (const a of [...kept.attributes]) if (!n.hasAttribute(a.name)) kept.removeAttribute(a.name);
  for (const a of n.attributes) if (kept.getAttribute(a.name) !== a.value) kept.setAttribute(a.name, a.value);
  const on = LISTENERS.get(n);
  if (on) for (const type of on.keys()) kept.addEventListener(type, dispatch);
  LISTENERS.set(kept, on ?? new Map());
  morph(kept, ...n.childNodes);
}
