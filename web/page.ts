// The page around the views: its header's parts, who is logged in, the current view's redraw, and the live
// event stream that calls it when the server reports a change.
import type { MeAnswer } from '../src/protocol/dashboard.js';
import { ApiError, eventsUrl, keepKey } from './api.js';
import { h } from './dom.js';

export const main = document.getElementById('main') as HTMLElement;
export const where = document.getElementById('where') as HTMLElement;
const liveDot = document.getElementById('live') as HTMLElement;
export const logout = document.getElementById('logout') as HTMLButtonElement;

/** Who serves the dashboard (asked once per login). */
export let me: MeAnswer | undefined;
let events: EventSource | undefined;
/** The current view's redraw (called on each change the server reports). */
let redraw: (() => Promise<void>) | undefined;
let drawing = false;
let again = false;
/** Bumped by each navigation: a draw of an earlier view stops touching the page. */
export let generation = 0;
/** Shows the login form (set by app.ts, which knows where a login leads). */
let login: (message?: string) => void = () => {};

/** Remember who serves the dashboard, or forget it (logged out). */
export function setMe(who: MeAnswer | undefined): void {
  me = who;
}

/** A new view comes: earlier draws stop, and nothing redraws until it says how. */
export function navigate(): void {
  generation++;
  redraw = undefined;
}

/** The current view draws (and redraws) itself with `draw`. */
export function setRedraw(draw: () => Promise<void>): void {
  redraw = draw;
}

/** How to show the login form when the session is gone. */
export function setLogin(show: (message?: string) => void): void {
  login = show;
}

/** The login form comes: no view, no stream. */
export function leave(): void {
  events?.close();
  redraw = undefined;
}

/** Redraw the current view, once at a time (a change during a draw draws again after it). */
export async function safeRedraw(): Promise<void> {
  if (!redraw) return;
  if (drawing) {
    again = true;
    return;
  }
  drawing = true;
  try {
    await redraw();
  } catch (err) {
    showError(err);
  } finally {
    drawing = false;
    if (again) {
      again = false;
      void safeRedraw();
    }
  }
}

/**
 * Open the view's event stream; it also starts the view's first draw. The server answers 'ready' once it has
 * taken the view's signature, so a change after that is reported: drawing then (not also on navigation) fetches
 * each thing once and misses nothing. A 'ready' after a reconnect draws again (changes may have been missed); a
 * stream that cannot open (too many, logged out) still gets its one draw, not live.
 */
export function listen(job?: string): void {
  events?.close();
  const source = new EventSource(eventsUrl(job));
  events = source;
  let drawn = false;
  const onEvent = () => {
    liveDot.classList.add('on');
    drawn = true;
    void safeRedraw();
  };
  source.addEventListener('ready', onEvent);
  source.addEventListener('change', onEvent);
  source.onerror = () => {
    liveDot.classList.remove('on');
    if (!drawn && events === source) {
      drawn = true;
      void safeRedraw();
    }
  };
}

/** An error in place of the view; a lost session (401) shows the login form. */
export function showError(err: unknown): void {
  if (err instanceof ApiError && err.status === 401) {
    keepKey(undefined);
    login();
    return;
  }
  main.replaceChildren(
    h('p', { class: 'error', 'data-testid': 'error' }, err instanceof Error ? err.message : String(err)),
  );
}

/** Do an action (cancel, rerun); its error in an alert. */
export async function act(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    alert(err instanceof Error ? err.message : String(err));
  }
  // A live stream reports the action's change (one redraw for one change); a page without one redraws itself.
  if (events?.readyState !== EventSource.OPEN) await safeRedraw();
}
