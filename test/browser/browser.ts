// Chromium (Debian's, installed by scripts/install-chromium.sh; never Playwright's own downloads) driven by
// playwright-core, plus the few editor helpers the browser test shares: log in, open a workflow, check that
// nothing on screen is an error, take a screenshot.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';

import { N8N_OWNER, REPO_ROOT } from '../../tools/n8n';

/** Debian's Chromium; INVOICE_SERVICE_CHROMIUM points at another Chromium/Chrome binary (then nothing is installed). */
export const CHROMIUM = process.env.INVOICE_SERVICE_CHROMIUM ?? '/usr/bin/chromium';
/**
 * Where screenshots go: test-output/screenshots (ignored by git), so that `npm test` leaves the working tree as it
 * was. `npm run screenshots` points this at docs/screenshots, the pictures the README shows.
 */
export const SCREENSHOT_DIR = path.resolve(
	REPO_ROOT,
	process.env.INVOICE_SERVICE_SCREENSHOT_DIR ?? path.join('test-output', 'screenshots'),
);
export const VIEWPORT = { width: 1440, height: 900 };
/**
 * How long a page load or an editor step may take before the test gives up (Playwright's default for every
 * wait on the page). Each wait ends as soon as the page is ready, so this only decides when to give up: on a
 * busy 2-core machine the editor's first load (a cold Chromium parsing n8n's bundle) took longer than 20 s.
 */
export const EDITOR_WAIT_MS = 3 * 60_000;

export const OWNER = N8N_OWNER;

/** Installs Debian's chromium when /usr/bin/chromium is missing (quiet and quick when it is there). */
export function ensureChromium(): void {
	if (!process.env.INVOICE_SERVICE_CHROMIUM) {
		execFileSync('bash', [path.join(REPO_ROOT, 'scripts', 'install-chromium.sh')], {
			stdio: ['ignore', 'inherit', 'inherit'],
		});
	}
	if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing`);
}

export interface BrowserSession {
	context: BrowserContext;
	page: Page;
	/** Requests to anything but loopback, aborted (the editor asks npm for the community node's details). */
	blocked: string[];
	/** Console errors, uncaught page errors and HTTP errors the page met; the test fails on unexpected ones. */
	consoleErrors: string[];
	close(): Promise<void>;
}

/** Headless Chromium with a fresh profile; every request that leaves 127.0.0.1 is aborted. */
export async function launchBrowser(): Promise<BrowserSession> {
	const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-service-chromium-'));
	const context = await chromium.launchPersistentContext(userDataDir, {
		executablePath: CHROMIUM,
		headless: true,
		args: [
			'--headless',
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
		viewport: VIEWPORT,
		locale: 'en-US',
		timezoneId: 'UTC',
		// The screenshots show the editor as a user sees it, without Chromium's scrollbars flickering in.
		reducedMotion: 'reduce',
	});
	const blocked: string[] = [];
	const consoleErrors: string[] = [];
	await context.route('**/*', async (route) => {
		const url = new URL(route.request().url());
		if (
			['data:', 'blob:'].includes(url.protocol) ||
			['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
		) {
			return await route.continue();
		}
		blocked.push(url.href);
		return await route.abort('internetdisconnected');
	});
	const page = context.pages()[0] ?? (await context.newPage());
	page.setDefaultTimeout(EDITOR_WAIT_MS);
	page.on('console', (m) => {
		// With the page's address: a failed resource load names its URL only there.
		if (m.type() === 'error') consoleErrors.push(`${m.text().slice(0, 300)} (${m.location().url})`);
	});
	page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message.slice(0, 300)}`));
	page.on('response', (r) => {
		if (r.status() >= 400)
			consoleErrors.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}`);
	});
	return {
		context,
		page,
		blocked,
		consoleErrors,
		async close() {
			await context.close();
			fs.rmSync(userDataDir, { recursive: true, force: true });
		},
	};
}

/** Signs in through the editor's sign-in form (the first page load: waits up to EDITOR_WAIT_MS for the form). */
export async function signIn(page: Page, baseUrl: string): Promise<void> {
	await page.goto(`${baseUrl}/signin`);
	const form = page.locator('[data-test-id="auth-form"]');
	await form.locator('[data-test-id="emailOrLdapLoginId"] input').fill(OWNER.email);
	await form.locator('[data-test-id="password"] input').fill(OWNER.password);
	await form.locator('[data-test-id="form-submit-button"]').click();
	await page.waitForURL((u) => !u.pathname.startsWith('/signin'));
}

/** Opens a saved workflow on the canvas and waits until its nodes are drawn. */
export async function openWorkflow(page: Page, baseUrl: string, id: string): Promise<void> {
	await page.goto(`${baseUrl}/workflow/${id}`);
	await page.locator('[data-test-id="canvas-node"]').first().waitFor();
}

/** What must not be on screen when a screenshot is taken: error toasts, node/run error panels, a failed credential test. */
const ERROR_SELECTORS = [
	'.el-notification:has(.el-notification--error)',
	'[data-test-id="node-error-message"]',
	'[data-test-id="node-error-description"]',
	'[data-test-id="node-error-callout"]',
	'[data-test-id="execution-error-callout"]',
	'[data-test-id="workflow-error-callout"]',
	'[data-test-id="connection-error-banner"]',
	'[data-test-id="canvas-node-status-error"]',
];
const CREDENTIAL_FAILED_TEXT = 'Couldn’t connect with these settings';

/** Fails when an error is visible; `allowCredentialError` lets the deliberate failed credential test through. */
export async function expectNoVisibleError(
	page: Page,
	opts: { allowCredentialError?: boolean } = {},
): Promise<void> {
	for (const selector of ERROR_SELECTORS) {
		const visible = await visibleTexts(page.locator(selector));
		if (visible.length)
			throw new Error(`an error is visible (${selector}): ${visible.join(' | ')}`);
	}
	if (!opts.allowCredentialError) {
		const failed = await visibleTexts(page.getByText(CREDENTIAL_FAILED_TEXT));
		if (failed.length)
			throw new Error(`a failed credential test is visible: ${failed.join(' | ')}`);
	}
}

async function visibleTexts(locator: Locator): Promise<string[]> {
	const out: string[] = [];
	for (const el of await locator.all()) {
		if (await el.isVisible()) out.push((await el.innerText()).replace(/\s+/g, ' ').trim());
	}
	return out;
}

/** Checks the screen holds no error, then saves docs/screenshots/<name>. */
export async function screenshot(
	page: Page,
	name: string,
	opts: { allowCredentialError?: boolean } = {},
): Promise<string> {
	// Let transitions and lazy icons settle so the picture shows what the assertions saw.
	await page.waitForTimeout(400);
	await expectNoVisibleError(page, opts);
	fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
	const file = path.join(SCREENSHOT_DIR, name);
	// JPEG, not PNG: n8n-node build copies every *.png in the project into dist/ (and so into the npm package).
	await page.screenshot({
		path: file,
		type: 'jpeg',
		quality: 85,
		animations: 'disabled',
		caret: 'hide',
	});
	return file;
}

/**
 * The title text of a parameter's label, without the Fixed/Expression toggle: `<label for="<name>">` in the
 * node panel, the label inside `[data-test-id="<name>"]` in the credential dialog.
 */
export async function labelOf(scope: Locator, parameterName: string): Promise<string> {
	const label = scope
		.locator(`label[for="${parameterName}"], [data-test-id="${parameterName}"] label`)
		.first();
	await label.waitFor({ state: 'visible' });
	const title = label.locator('[class*="_title_"]').first();
	const text = (await title.count()) ? await title.innerText() : await label.innerText();
	return text.split('\n')[0].replace(/\s+/g, ' ').trim();
}

/**
 * Drags `source` onto `target` with the mouse, as a person does. n8n's editor runs its own drag on mouse events
 * (mousedown, a few moves past a threshold, mouseup over the drop area), not HTML5 drag and drop, so Playwright's
 * `dragTo` (one jump) does not start it.
 */
export async function dragOnto(page: Page, source: Locator, target: Locator): Promise<void> {
	await target.scrollIntoViewIfNeeded();
	const from = await source.boundingBox();
	const to = await target.boundingBox();
	if (!from || !to) throw new Error('dragOnto: the source or the target is not on screen');
	const center = (box: { x: number; y: number; width: number; height: number }) => ({
		x: box.x + box.width / 2,
		y: box.y + box.height / 2,
	});
	const a = center(from);
	const b = center(to);
	await page.mouse.move(a.x, a.y);
	await page.mouse.down();
	await page.mouse.move(a.x + 12, a.y + 12, { steps: 4 });
	await page.mouse.move(b.x, b.y, { steps: 20 });
	await page.mouse.move(b.x + 2, b.y + 2, { steps: 2 });
	await page.mouse.up();
}
