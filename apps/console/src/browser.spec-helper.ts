/**
 * A real headless Chromium for the console's end-to-end specs: Debian's `chromium` package
 * (/usr/bin/chromium, which .ci/run installs when missing) driven by playwright-core, with no
 * browser download. Also the accessibility basics every page is checked for, and screenshots.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from '@baton/testing/crash';

export const CHROMIUM = process.env.BATON_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = join(REPO_ROOT, '.tmp', 'console-screenshots');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
  });
}

/** Saves a full-page screenshot as `<name>.png` under .tmp/console-screenshots/. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * The controls of the page (buttons, links, inputs, selects, text areas) that have no accessible
 * name: no aria-label, no aria-labelledby, no <label>, no text. An empty list is the pass.
 */
export function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const missing: string[] = [];
    for (const el of Array.from(document.querySelectorAll('button, a[href], input, select, textarea'))) {
      if ((el as HTMLInputElement).type === 'hidden') continue;
      const labelled =
        el.getAttribute('aria-label')?.trim() ||
        el.getAttribute('aria-labelledby') ||
        ((el as HTMLInputElement).labels?.length ?? 0) > 0 ||
        el.textContent?.trim() ||
        el.getAttribute('title');
      if (!labelled) missing.push(el.outerHTML.slice(0, 120));
    }
    return missing;
  });
}

/** Presses Tab until the focused element's text is `name`; true when reached within `maxTabs`. */
export async function tabTo(page: Page, name: string, maxTabs = 60): Promise<boolean> {
  for (let i = 0; i < maxTabs; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
    if (focused === name) return true;
  }
  return false;
}
