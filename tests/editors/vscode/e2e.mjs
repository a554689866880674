// Drives a running code-server (the real VS Code workbench) in Debian's Chromium through one
// fabric-lsp scenario. Run by tests/editors/test_vscode.py:
//
//   node e2e.mjs CONFIG.json
//
// CONFIG: {mode, url, workspace, artifacts, chromium, timeoutMs, totalTimeoutMs, ...} where `mode`
// names one of SCENARIOS (at the end of this file) and the other keys are that scenario's, as its
// comment says. To add a case: write an async function that returns a summary object (or throws),
// add it to SCENARIOS, and call _drive(server, "<mode>", ...) from a test.
// Prints one JSON object per line: {"step": ..., "t": seconds} while it runs, then
// {"result": "ok", ...} or {"result": "fail", "error": ...}; exits 0 only on success.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const WAIT = config.timeoutMs ?? 60000; // upper bound for any single wait
const SHORT = 5000;
const started = Date.now();
const screenshots = [];
let page;
let shot = 0;

function emit(object) {
    process.stdout.write(JSON.stringify({ ...object, t: (Date.now() - started) / 1000 }) + '\n');
}

function step(name) {
    emit({ step: name });
}

async function screenshot(name) {
    shot += 1;
    const file = path.join(config.artifacts, `${String(shot).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file, timeout: SHORT }).catch(() => undefined);
    screenshots.push(file);
    return file;
}

/** Polls fn() until it returns a truthy value; throws `what` after `timeout` ms. */
async function until(what, fn, timeout = WAIT, interval = 200) {
    const deadline = Date.now() + timeout;
    let last;
    for (;;) {
        try {
            last = await fn();
            if (last) {
                return last;
            }
        } catch (error) {
            last = error;
        }
        if (Date.now() > deadline) {
            throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${String(last)})`);
        }
        await page.waitForTimeout(interval);
    }
}

const editor = () => page.locator('.part.editor .editor-instance .monaco-editor').first();

async function editorText() {
    const text = await editor().locator('.view-lines').innerText({ timeout: SHORT });
    return text.replace(/\u00a0/g, ' ');
}

/** The rows of the Problems panel: [{file, label, text, severity}] (the panel must be open). */
async function problemRows() {
    const rows = await page.locator('.markers-panel .monaco-list-row').evaluateAll((elements) =>
        elements.map((row) => ({
            level: row.getAttribute('aria-level'),
            label: row.getAttribute('aria-label') ?? '',
            text: row.textContent ?? '',
            icons: [...row.querySelectorAll('.codicon')].map((icon) => icon.className).join(' '),
        })),
    );
    // The tree is rendered flat: a file row (level 1) followed by its markers (level 2).
    let file = '';
    const markers = [];
    for (const row of rows) {
        if (row.level === '1') {
            file = row.text;
        } else {
            // The label starts with the severity; the icon is replaced by a light bulb on the focused row.
            const head = row.label.toLowerCase();
            const severity = head.startsWith('error')
                ? 'error'
                : head.startsWith('warning')
                  ? 'warning'
                  : head.startsWith('info')
                    ? 'info'
                    : 'other';
            markers.push({ file, label: row.label, text: row.text, severity, icons: row.icons });
        }
    }
    return markers;
}

async function codeRows(file, code) {
    const rows = await problemRows();
    return rows.filter((row) => row.text.includes(code) && row.file.startsWith(file));
}

async function fab001Rows(file) {
    return codeRows(file, 'FAB001');
}

async function openProblems() {
    const panel = page.locator('.markers-panel');
    if (!(await panel.isVisible().catch(() => false))) {
        await page.keyboard.press('Control+Shift+M');
    }
    await panel.waitFor({ state: 'visible', timeout: SHORT * 2 });
}

/** Opens `name` from the Explorer; waits until its text (which contains `contains`) is shown. */
async function openFile(name, contains = 'fabric') {
    step(`open ${name}`);
    const row = page.locator('.explorer-folders-view .monaco-list-row', {
        has: page.locator('.label-name', { hasText: new RegExp(`^${name.replace('.', '\\.')}$`) }),
    });
    try {
        await row.first().click({ timeout: SHORT * 2 });
    } catch {
        // Fallback: Quick Open.
        await page.keyboard.press('Control+P');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible', timeout: SHORT });
        await input.fill(name);
        await page
            .locator('.quick-input-list .monaco-list-row', { hasText: name })
            .first()
            .waitFor({ timeout: SHORT * 2 });
        await page.keyboard.press('Enter');
    }
    await until(`the editor tab of ${name}`, async () =>
        (await page.locator('.tabs-container .tab.active').first().textContent({ timeout: SHORT }))?.includes(name),
    );
    await until(`the text of ${name}`, async () => (await editorText()).includes(contains));
}

async function focusTab(name) {
    await page
        .locator('.tabs-container .tab', { hasText: name })
        .first()
        .click({ timeout: SHORT * 2 });
    await until(`the editor tab of ${name}`, async () =>
        (await page.locator('.tabs-container .tab.active').first().textContent({ timeout: SHORT }))?.includes(name),
    );
}

async function goTo(line, column) {
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: SHORT });
    await input.fill(`:${line}:${column}`);
    await page.keyboard.press('Enter');
    await until(
        'the cursor to be on the line',
        async () => {
            const status = await page.locator('#status\\.editor\\.selection').textContent({ timeout: SHORT });
            // Only the line: the status bar counts characters, Ctrl+G takes UTF-16 columns.
            return status?.includes(`Ln ${line},`);
        },
        SHORT * 2,
    );
    await until(
        'focus in the editor',
        () => page.evaluate(() => !!document.activeElement?.closest('.monaco-editor')),
        SHORT * 2,
    );
}

async function openQuickFixMenu(title) {
    const menu = page.locator('.action-widget');
    const item = menu.locator('.monaco-list-row', { hasText: title });
    for (let attempt = 1; attempt <= 4; attempt++) {
        if (attempt < 4) {
            await editor()
                .locator('textarea')
                .focus({ timeout: SHORT })
                .catch(() => undefined);
            await page.keyboard.press('Control+.');
        } else {
            // Fallback: the Command Palette.
            await page.keyboard.press('Control+Shift+P');
            const input = page.locator('.quick-input-widget input');
            await input.waitFor({ state: 'visible', timeout: SHORT });
            await input.fill('>Quick Fix...');
            await page
                .locator('.quick-input-list .monaco-list-row', { hasText: 'Quick Fix...' })
                .first()
                .waitFor({ timeout: SHORT });
            await page.keyboard.press('Enter');
        }
        try {
            await item.first().waitFor({ state: 'visible', timeout: SHORT * 2 });
            return;
        } catch {
            step(`quick fix menu not shown (attempt ${attempt})`);
            await page.keyboard.press('Escape');
        }
    }
    throw new Error(`the quick fix "${title}" was not offered`);
}

/** Moves the focus in the open quick fix menu to the item `title` (Enter then applies it). */
async function focusMenuItem(title) {
    const focused = page.locator('.action-widget .monaco-list-row.focused');
    for (let i = 0; i < 10; i++) {
        const text = await focused
            .first()
            .textContent({ timeout: SHORT })
            .catch(() => '');
        if (text?.includes(title)) {
            return;
        }
        await page.keyboard.press('ArrowDown');
        await page.waitForTimeout(100);
    }
    throw new Error(`could not focus the quick fix "${title}" in the menu`);
}

/** Runs a command from the Command Palette by its full title, e.g. "fabric-lsp: Restart server". */
async function runCommand(title) {
    await page.keyboard.press('Control+Shift+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: SHORT });
    await input.fill(`>${title}`);
    await page
        .locator('.quick-input-list .monaco-list-row', { hasText: title })
        .first()
        .waitFor({ state: 'visible', timeout: SHORT * 2 });
    await page.keyboard.press('Enter');
    await input.waitFor({ state: 'hidden', timeout: SHORT });
}

async function main() {
    fs.mkdirSync(config.artifacts, { recursive: true });
    const browser = await chromium.launch({
        executablePath: config.chromium,
        headless: true,
        timeout: WAIT,
        args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-dev-shm-usage',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--no-first-run',
        ],
    });
    try {
        const context = await browser.newContext({ viewport: { width: 1400, height: 860 } });
        page = await context.newPage();
        page.setDefaultTimeout(WAIT);
        step('load workbench');
        await page.goto(`${config.url}/?folder=${encodeURIComponent(config.workspace)}`, { timeout: WAIT });
        await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: WAIT });
        await page
            .locator('.explorer-folders-view .monaco-list-row')
            .first()
            .waitFor({ state: 'visible', timeout: WAIT });
        const scenario = SCENARIOS[config.mode];
        if (!scenario) {
            throw new Error(`unknown mode ${JSON.stringify(config.mode)} (known: ${Object.keys(SCENARIOS).join(', ')})`);
        }
        const summary = await scenario();
        emit({ result: 'ok', ...summary, screenshots, seconds: (Date.now() - started) / 1000 });
    } catch (error) {
        await screenshot('failure');
        emit({ result: 'fail', error: String(error?.stack ?? error), screenshots });
        process.exitCode = 1;
    } finally {
        await browser.close().catch(() => undefined);
    }
}

/** Notifications (toasts) that mention fabric-lsp: "source: message". */
async function fabricNotifications() {
    return page.locator('.notifications-toasts .notification-toast').evaluateAll((toasts) =>
        toasts
            .map((toast) => {
                const source = toast.querySelector('.notification-list-item-source')?.textContent ?? '';
                const message = toast.querySelector('.notification-list-item-message')?.textContent ?? '';
                return `${source}: ${message}`;
            })
            .filter((text) => /fabric-lsp/i.test(text)),
    );
}

/** {files: {error}, expectNotification: [text...]}: exactly the notification that says each text. */
async function missingServer() {
    await openFile(config.files.error);
    step('wait for the notification');
    const texts = await until('a fabric-lsp notification', async () => {
        const found = await fabricNotifications();
        return found.length ? found : undefined;
    });
    // Give a second one (e.g. from vscode-languageclient) time to show up.
    await page.waitForTimeout(3000);
    const all = await fabricNotifications();
    await screenshot('notification');
    emit({ step: 'notifications', texts: all });
    for (const expected of config.expectNotification) {
        if (!texts[0].includes(expected)) {
            throw new Error(`notification ${JSON.stringify(texts[0])} does not say ${JSON.stringify(expected)}`);
        }
    }
    if (/\bat\s+\S+\s*\(|Error:\s/.test(all.join('\n'))) {
        throw new Error(`notification shows a stack trace: ${JSON.stringify(all)}`);
    }
    return { notifications: all.length, texts: all };
}

/** {files: {error}}: the server runs with the Python extension's interpreter: FAB001 shows; the
 * restart command works; a settings change turns the error into a warning. */
async function pythonExtension() {
    const errorFile = config.files.error;
    await openFile(errorFile);
    step('wait for the error squiggle');
    await editor().locator('.squiggly-error').first().waitFor({ state: 'attached', timeout: WAIT });
    await openProblems();
    await until('the FAB001 error row in the Problems panel', async () => (await fab001Rows(errorFile)).length > 0);
    await screenshot('python-extension-interpreter');
    step('restart command');
    await runCommand('fabric-lsp: Restart server');
    // The restarted server gets the open document again and publishes the error again.
    await page.waitForTimeout(500);
    await until('the FAB001 error row after the restart', async () => (await fab001Rows(errorFile)).length > 0);
    await editor().locator('.squiggly-error').first().waitFor({ state: 'attached', timeout: WAIT });
    const notifications = await fabricNotifications();
    if (notifications.length) {
        throw new Error(`unexpected notifications: ${JSON.stringify(notifications)}`);
    }
    await screenshot('restarted');

    step('change a setting');
    // Written like an edit of .vscode/settings.json: VS Code reloads it and the client sends
    // workspace/didChangeConfiguration; the server re-publishes with the new severity.
    fs.writeFileSync(
        path.join(config.workspace, '.vscode', 'settings.json'),
        JSON.stringify({ 'fabric-lsp.certainSeverity': 'warning' }, null, 2),
    );
    await until('the FAB001 row to become a warning', async () => {
        const rows = await fab001Rows(errorFile);
        return rows.length > 0 && rows.every((row) => row.severity === 'warning');
    });
    await editor().locator('.squiggly-warning').first().waitFor({ state: 'attached', timeout: WAIT });
    await screenshot('certain-severity-warning');
    return {};
}

/** {files: {error}, fixedLine}: editor.codeActionsOnSave {"source.fixAll.fabric-lsp": "explicit"}:
 * Ctrl+S fixes the file. */
async function fixOnSave() {
    const errorFile = config.files.error;
    await openFile(errorFile);
    step('wait for the error squiggle');
    await editor().locator('.squiggly-error').first().waitFor({ state: 'attached', timeout: WAIT });
    await screenshot('before-save');
    step('save');
    await editor()
        .locator('textarea')
        .focus({ timeout: SHORT })
        .catch(() => undefined);
    await page.keyboard.press('Control+S');
    const onDisk = path.join(config.workspace, errorFile);
    await until('the fixed file on disk', () => fs.readFileSync(onDisk, 'utf8').includes(config.fixedLine));
    await until(
        'the error squiggle to disappear',
        async () => (await editor().locator('.squiggly-error').count()) === 0,
    );
    await screenshot('saved-fixed');
    return {};
}

/** {files: {error, warning?, clean?}, errorLine, errorColumn, expectPosition?, quickFixTitle,
 * fixedLine}: the warning; the error at its position, its quick fix via Ctrl+. and Enter, save,
 * the problem gone; nothing in the clean file. */
async function quickFix() {
    // files.warning and files.clean are optional.
    const { error: errorFile, warning: warningFile, clean: cleanFile } = config.files;
    if (cleanFile) {
        await openFile(cleanFile);
    }
    if (warningFile) {
        await openFile(warningFile);
        step('wait for the warning squiggle');
        await editor().locator('.squiggly-warning').first().waitFor({ state: 'attached', timeout: WAIT });
        await openProblems();
        const warningRows = await until('the FAB001 warning row in the Problems panel', async () => {
            const rows = await fab001Rows(warningFile);
            return rows.length ? rows : undefined;
        });
        if (warningRows.some((row) => row.severity !== 'warning')) {
            throw new Error(`expected a warning, got ${JSON.stringify(warningRows)}`);
        }
        await screenshot('warning');
    }

    await openFile(errorFile);
    step('wait for the error squiggle');
    await editor().locator('.squiggly-error').first().waitFor({ state: 'attached', timeout: WAIT });
    await screenshot('error-squiggle');
    await openProblems();
    const errorRows = await until('the FAB001 error row in the Problems panel', async () => {
        const rows = await fab001Rows(errorFile);
        return rows.length ? rows : undefined;
    });
    if (errorRows.some((row) => row.severity !== 'error')) {
        throw new Error(`expected an error, got ${JSON.stringify(errorRows)}`);
    }
    // The position VS Code shows (UTF-16 columns): catches position-encoding mistakes.
    if (config.expectPosition && !errorRows.some((row) => row.text.includes(config.expectPosition))) {
        throw new Error(`expected the problem at ${config.expectPosition}, got ${JSON.stringify(errorRows)}`);
    }
    const allRows = await problemRows();
    emit({ step: 'problems', rows: allRows });
    if (cleanFile && allRows.some((row) => row.file.startsWith(cleanFile))) {
        throw new Error(`the clean file has problems: ${JSON.stringify(allRows)}`);
    }
    await screenshot('problems');

    step('quick fix');
    await goTo(config.errorLine, config.errorColumn);
    await until('the light bulb', () => page.locator('.lightBulbWidget').first().isVisible(), WAIT);
    await openQuickFixMenu(config.quickFixTitle);
    await focusMenuItem(config.quickFixTitle);
    await screenshot('quickfix-menu');
    await page.keyboard.press('Enter');
    await until('the edit in the editor', async () => (await editorText()).includes(config.fixedLine));
    await screenshot('fixed');

    step('save');
    await page.keyboard.press('Control+S');
    const onDisk = path.join(config.workspace, errorFile);
    await until('the fixed file on disk', () => fs.readFileSync(onDisk, 'utf8').includes(config.fixedLine));
    step('wait for the problem to go away');
    await until('the FAB001 error row to disappear', async () => (await fab001Rows(errorFile)).length === 0);
    await until(
        'the error squiggle to disappear',
        async () => (await editor().locator('.squiggly-error').count()) === 0,
    );
    await screenshot('saved-no-problem');
    if (!cleanFile) {
        return {};
    }

    step('clean file');
    await focusTab(cleanFile);
    await page.waitForTimeout(1000);
    const cleanSquiggles = await editor().locator('.squiggly-error, .squiggly-warning, .squiggly-info').count();
    const cleanRows = (await problemRows()).filter((row) => row.file.startsWith(cleanFile));
    await screenshot('clean');
    if (cleanSquiggles || cleanRows.length) {
        throw new Error(
            `the clean file shows problems: ${cleanSquiggles} squiggles, rows ${JSON.stringify(cleanRows)}`,
        );
    }
    return {};
}

/** {expect: [{file, severity: "error" | "warning", position?: "[Ln L, Col C]", code?, contains?,
 * language?}]}: opens each file (its text contains `contains`, default "fabric") and waits for its
 * squiggle and the Problems row of `code` (default FAB001) with that severity (and position);
 * `language`: the language mode the status bar shows for the file (e.g. "Shell Script"). */
async function diagnostics() {
    const languages = {};
    const problems = {};
    for (const { file, severity, position, code = 'FAB001', contains = 'fabric', language } of config.expect) {
        await openFile(file, contains);
        if (language) {
            const mode = page.locator('#status\\.editor\\.mode');
            languages[file] = await until(`the language mode ${language} of ${file}`, async () => {
                const text = (await mode.first().textContent({ timeout: SHORT }))?.trim();
                return text === language ? text : undefined;
            });
        }
        step(`wait for the ${severity} squiggle in ${file}`);
        await editor().locator(`.squiggly-${severity}`).first().waitFor({ state: 'attached', timeout: WAIT });
        await openProblems();
        const rows = await until(`the ${code} ${severity} row of ${file} in the Problems panel`, async () => {
            const found = await codeRows(file, code);
            return found.length ? found : undefined;
        });
        emit({ step: 'problems', file, rows });
        problems[file] = rows;
        if (rows.some((row) => row.severity !== severity)) {
            throw new Error(`expected ${severity} in ${file}, got ${JSON.stringify(rows)}`);
        }
        if (position && !rows.some((row) => row.text.includes(position))) {
            throw new Error(`expected the problem at ${position} in ${file}, got ${JSON.stringify(rows)}`);
        }
        await screenshot(file.replace(/\W+/g, '-'));
    }
    return { notifications: await fabricNotifications(), languages, problems };
}

/** The text of every cell editor of the open notebook, in order. */
async function notebookText() {
    const texts = await page.locator('.notebook-editor .monaco-editor .view-lines').allInnerTexts();
    return texts.join('\n').replace(/\u00a0/g, ' ');
}

/** A notebook (files.notebook): the FAB001 squiggle in the cell that calls setup_optimizers
 * (the Fabric is created in an earlier cell), its Problems row, the quick fix applied in that
 * cell via Ctrl+. and Enter, the notebook saved, the problem gone. */
async function notebookQuickFix() {
    const name = config.files.notebook;
    step(`open ${name}`);
    await page
        .locator('.explorer-folders-view .monaco-list-row', { has: page.locator('.label-name', { hasText: name }) })
        .first()
        .click({ timeout: SHORT * 2 });
    const notebookEditor = page.locator('.notebook-editor .monaco-editor').first(); // a cell's editor
    try {
        await notebookEditor.waitFor({ state: 'visible', timeout: SHORT * 2 });
    } catch {
        // Opened as JSON text (the notebook type was not registered yet): reopen it with the
        // notebook editor of VS Code's built-in ipynb extension.
        step('reopen with the Jupyter notebook editor');
        await screenshot('notebook-opened-as-text');
        await page.keyboard.press('Control+Shift+P');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible', timeout: SHORT });
        await input.fill('>View: Reopen Editor With...');
        await page
            .locator('.quick-input-list .monaco-list-row', { hasText: 'Reopen Editor With...' })
            .first()
            .waitFor({ state: 'visible', timeout: SHORT * 2 });
        await page.keyboard.press('Enter');
        const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Jupyter Notebook' }).first();
        await pick.waitFor({ state: 'visible', timeout: SHORT * 2 });
        await pick.click();
        await notebookEditor.waitFor({ state: 'visible', timeout: WAIT });
    }
    await until('the cells', async () => (await notebookText()).includes('fabric.setup_optimizers'));
    step('wait for the error squiggle in the cell');
    const squiggle = page.locator('.notebook-editor .squiggly-error').first();
    await squiggle.waitFor({ state: 'attached', timeout: WAIT });
    await screenshot('notebook-squiggle');
    await openProblems();
    const rows = await until('the FAB001 error row in the Problems panel', async () => {
        const found = await fab001Rows(name);
        return found.length ? found : undefined;
    });
    emit({ step: 'problems', rows });
    if (config.expectPosition && !rows.some((row) => row.text.includes(config.expectPosition))) {
        throw new Error(`expected the problem at ${config.expectPosition}, got ${JSON.stringify(rows)}`);
    }
    await screenshot('notebook-problems');
    await page.keyboard.press('Control+Shift+M'); // close the panel: more room for the cells

    step('quick fix in the cell');
    const menu = page.locator('.action-widget .monaco-list-row', { hasText: config.quickFixTitle });
    for (let attempt = 1; ; attempt++) {
        // Put the cursor on the squiggle (its cell's editor takes the focus), then Ctrl+.
        await squiggle.scrollIntoViewIfNeeded({ timeout: SHORT }).catch(() => undefined);
        const box = await squiggle.boundingBox();
        if (box) {
            await page.mouse.click(box.x + Math.min(20, box.width / 2), box.y + box.height / 2);
        }
        await page.keyboard.press('Control+.');
        try {
            await menu.first().waitFor({ state: 'visible', timeout: SHORT * 2 });
            break;
        } catch {
            step(`quick fix menu not shown (attempt ${attempt})`);
            await page.keyboard.press('Escape');
            if (attempt >= 4) {
                throw new Error(`the quick fix "${config.quickFixTitle}" was not offered in the cell`);
            }
        }
    }
    await focusMenuItem(config.quickFixTitle);
    await screenshot('notebook-quickfix-menu');
    await page.keyboard.press('Enter');
    await until('the edit in the cell', async () => (await notebookText()).includes(config.fixedLine));
    await screenshot('notebook-fixed');

    step('save');
    await page.keyboard.press('Control+S');
    const onDisk = path.join(config.workspace, name);
    await until('the fixed notebook on disk', () => fs.readFileSync(onDisk, 'utf8').includes(config.fixedLine));
    step('wait for the problem to go away');
    await until(
        'the error squiggle to disappear',
        async () => (await page.locator('.notebook-editor .squiggly-error').count()) === 0,
    );
    await openProblems();
    await until('the FAB001 error row to disappear', async () => (await fab001Rows(name)).length === 0);
    await screenshot('notebook-saved-no-problem');
    return {};
}

/** The scenarios, by the `mode` of the config. */
const SCENARIOS = {
    quickfix: quickFix,
    diagnostics,
    'missing-server': missingServer,
    'python-extension': pythonExtension,
    'fix-on-save': fixOnSave,
    notebook: notebookQuickFix,
};

const watchdog = setTimeout(() => {
    emit({ result: 'fail', error: 'global timeout', screenshots });
    process.exit(2);
}, config.totalTimeoutMs ?? 240000);
watchdog.unref();

await main();
