import fs from 'node:fs';

/** The dashboard's files: its page, script and style sheet (web/, built by scripts/web.mjs). */
export const WEB_FILES = ['index.html', 'app.js', 'app.css'] as const;
export type WebFile = (typeof WEB_FILES)[number];

/**
 * A file of the built dashboard, read from dist/web/ (the modules tsc compiled to dist/src sit three folders
 * below it). The bundle, dist/drover.cjs, has no such folder beside it: scripts/bundle.mjs replaces this module
 * with one that holds the files' text, so the installed CLI serves the dashboard with nothing else on disk.
 */
export function readWebFile(name: WebFile): string {
  return fs.readFileSync(new URL(`../../../web/${name}`, import.meta.url), 'utf8');
}
