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
 * The script {@link unnamedControls} runs in the page (a string: this file is compiled for Node,
 * without the DOM's types). A control is named by aria-label, aria-labelledby, a <label>, its
 * text or a title.
 */
const UNNAMED_CONTROLS_SCRIPT = `(() => {
  const missing = [];
  for (const el of document.querySelectorAll('button, a[href], input, select, textarea')) {
    if (el.type === 'hidden') continue;
    const named =
      (el.getAttribute('aria-label') || '').trim() ||
      el.getAttribute('aria-labelledby') ||
      (el.labels && el.labels.length > 0) ||
      (el.textContent || '').trim() ||
      el.getAttribute('title');
    if (!named) missing.push(el.outerHTML.slice(0, 120));
  }
  return missing;
})()`;

/** The controls of the page (buttons, links, inputs, selects, text areas) with no accessible name; [] passes. */
export function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(UNNAMED_CONTROLS_SCRIPT);
}

/** Presses Tab until the focused element's text is `name`; true when reached within `maxTabs`. */
export async function tabTo(page: Page, name: string, maxTabs = 60): Promise<boolean> {
  for (let i = 0; i < maxTabs; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate<string>(`document.activeElement?.textContent?.trim() ?? ''`);
    if (focused === name) return true;
  }
  return false;
}
