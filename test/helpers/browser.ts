import fs from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * A real headless Chromium (Debian's, driven by playwright-core: no browser download) for the dashboard's tests.
 * Outside CI a machine without it skips them; in CI (which installs it) they run, or fail.
 */
export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests are skipped here, or undefined when they run. */
export const noBrowser =
  fs.existsSync(CHROMIUM) || process.env.CI ? undefined : `needs Debian's chromium at ${CHROMIUM}`;

/** Start Chromium; it is closed after the test. */
export async function startBrowser(t: { after(fn: () => Promise<void>): void }): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  t.after(() => browser.close());
  return browser;
}

/** The size of the dashboard tests' pages. */
const VIEWPORT = { width: 1280, height: 900 };

/** Collect `page`'s script errors and console errors in `errors` (checked by the caller); returns the page. */
export function watch(page: Page, errors: string[]): Page {
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console error: ${m.text()}`);
  });
  return page;
}

/** A page that fails the test on any script error of the dashboard (collected, checked by the caller). */
export async function newPage(browser: Browser, errors: string[]): Promise<Page> {
  return watch(await browser.newPage({ viewport: VIEWPORT }), errors);
}

/** A browser context: pages that share one cookie jar and storage, as the tabs of one browser do. */
export function newContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ viewport: VIEWPORT });
}

/** What a screenshot holds: its size, how many colours, and the share of pixels unlike its most common one. */
export interface PixelStats {
  width: number;
  height: number;
  colours: number;
  /** 0..1: pixels not of the background (the most common colour). */
  inked: number;
}

/**
 * Measure a PNG by decoding it in the browser itself (a blank page of its own, no dashboard CSP): what tells a
 * drawn page from a blank one, without a PNG decoder of our own.
 */
export async function pixelStats(browser: Browser, png: Buffer): Promise<PixelStats> {
  const page = await browser.newPage();
  try {
    // As text: the test's TypeScript has no DOM types, the page has.
    return (await page.evaluate(`(async () => {
      const img = new Image();
      img.src = 'data:image/png;base64,${png.toString('base64')}';
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.width;
      canvas.height = img.height;
      const g = canvas.getContext('2d');
      g.drawImage(img, 0, 0);
      const data = g.getImageData(0, 0, img.width, img.height).data;
      const counts = new Map();
      for (let i = 0; i < data.length; i += 4) {
        const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      let most = 0;
      for (const n of counts.values()) most = Math.max(most, n);
      const pixels = data.length / 4;
      return { width: img.width, height: img.height, colours: counts.size, inked: (pixels - most) / pixels };
    })()`)) as PixelStats;
  } finally {
    await page.close();
  }
}
