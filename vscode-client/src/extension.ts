// VS Code client for fabric-lsp: starts `<python> -m fabric_lsp` (or the `fabric-lsp.path`
// executable) on stdio with the interpreter the user works with, and forwards the settings.
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
    CloseAction,
    CloseHandlerResult,
    DidChangeConfigurationNotification,
    ErrorAction,
    ErrorHandlerResult,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
    State,
} from 'vscode-languageclient/node';
import { onDidChangeInterpreter, selectedInterpreter } from './python';

const SECTION = 'fabric-lsp';
const SERVER_MODULE = 'fabric_lsp';
const PACKAGE = 'fabric-lsp';
const DEFAULT_PYTHON = process.platform === 'win32' ? 'python' : 'python3';
const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

type InterpreterSource = 'setting' | 'Python extension' | 'default';

interface Launch {
    /** The interpreter whose environment jedi analyses (undefined: let the server use its own). */
    interpreter: string | undefined;
    interpreterSource: InterpreterSource;
    command: string;
    args: string[];
}

let output: vscode.OutputChannel;
let client: LanguageClient | undefined;
let currentLaunch: Launch | undefined;
let queue: Promise<void> = Promise.resolve();

export function activate(context: vscode.ExtensionContext): void {
    output = vscode.window.createOutputChannel('fabric-lsp');
    context.subscriptions.push(output);

    context.subscriptions.push(
        vscode.commands.registerCommand('fabric-lsp.restart', () => schedule('restart command')),
        vscode.commands.registerCommand('fabric-lsp.showOutput', () => output.show(true)),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (event.affectsConfiguration(`${SECTION}.interpreter`) || event.affectsConfiguration(`${SECTION}.path`)) {
                void schedule('interpreter or path setting changed');
            } else if (
                event.affectsConfiguration(`${SECTION}.reportUnknown`) &&
                !isSet(vscode.workspace.getConfiguration(SECTION, resourceUri()), 'reportUnknown')
            ) {
                // Unset: a restart lets pyproject.toml (or the default) apply again.
                void schedule('reportUnknown setting removed');
            } else if (event.affectsConfiguration(SECTION)) {
                void pushSettings();
            }
        }),
        vscode.workspace.onDidChangeWorkspaceFolders(() => schedule('workspace folders changed')),
        vscode.workspace.onDidGrantWorkspaceTrust(() => schedule('workspace trusted')),
        { dispose: () => void client?.stop() },
    );

    // The Python extension may be installed, or activate, after us.
    const subscribePython = async () => {
        const disposable = await onDidChangeInterpreter(() => void schedule('Python interpreter changed', true));
        if (disposable) {
            context.subscriptions.push(disposable);
        }
        return disposable !== undefined;
    };
    // Not awaited: activation waits neither for the Python extension nor for the server.
    void schedule('activation');
    void subscribePython().then((subscribed) => {
        if (!subscribed) {
            const listener = vscode.extensions.onDidChange(async () => {
                if (await subscribePython()) {
                    listener.dispose();
                    void schedule('Python extension installed', true);
                }
            });
            context.subscriptions.push(listener);
        }
    });
}

export async function deactivate(): Promise<void> {
    await stopClient();
}

/**
 * Runs restarts one after the other, never two at once. With `onlyIfChanged` (events such as the
 * Python extension's, which also fire when nothing changed), a running server is kept when it
 * would be started the same way.
 */
function schedule(reason: string, onlyIfChanged = false): Promise<void> {
    queue = queue
        .then(() => restart(reason, onlyIfChanged))
        .catch((error) => log(`restart failed: ${describe(error)}`));
    return queue;
}

function sameLaunch(a: Launch | undefined, b: Launch): boolean {
    return (
        !!a &&
        a.interpreter === b.interpreter &&
        a.command === b.command &&
        a.args.length === b.args.length &&
        a.args.every((arg, i) => arg === b.args[i])
    );
}

async function restart(reason: string, onlyIfChanged = false): Promise<void> {
    const launch = await resolveLaunch();
    if (onlyIfChanged && client?.isRunning() && sameLaunch(currentLaunch, launch)) {
        log(`${reason}: the server already runs with ${launch.command}; kept`);
        return;
    }
    log(`(re)starting the server: ${reason}`);
    await stopClient();
    currentLaunch = launch;
    log(
        `interpreter: ${launch.interpreter ?? '(none)'} (from ${launch.interpreterSource}); ` +
            `command: ${[launch.command, ...launch.args].join(' ')}`,
    );
    if (!(await preflight(launch))) {
        return;
    }
    const newClient = createClient(launch);
    client = newClient;
    try {
        await newClient.start();
        log('server started');
    } catch (error) {
        // vscode-languageclient has already shown its own notification for this one.
        log(`the server failed to start: ${describe(error)}`);
    }
}

async function stopClient(): Promise<void> {
    const old = client;
    client = undefined;
    if (old) {
        try {
            await old.stop(3000);
        } catch (error) {
            log(`stopping the server: ${describe(error)}`);
        }
        try {
            await old.dispose(1000);
        } catch {
            // already stopped
        }
    }
}

function resourceUri(): vscode.Uri | undefined {
    return vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
}

function expand(value: string): string {
    let result = value.trim();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (folder) {
        result = result.replace(/\$\{workspaceFolder\}/g, folder);
    }
    result = result.replace(/\$\{userHome\}/g, os.homedir());
    if (result === '~' || result.startsWith('~/')) {
        result = path.join(os.homedir(), result.slice(1));
    }
    if (folder && result && !path.isAbsolute(result) && /[\\/]/.test(result)) {
        result = path.resolve(folder, result);
    }
    return result;
}

async function resolveLaunch(): Promise<Launch> {
    const config = vscode.workspace.getConfiguration(SECTION, resourceUri());
    const interpreterSetting = expand(config.get<string>('interpreter', ''));
    const executableSetting = expand(config.get<string>('path', ''));

    let interpreter: string | undefined;
    let interpreterSource: InterpreterSource;
    if (interpreterSetting) {
        interpreter = interpreterSetting;
        interpreterSource = 'setting';
    } else {
        interpreter = await selectedInterpreter(resourceUri());
        interpreterSource = interpreter ? 'Python extension' : 'default';
    }

    if (executableSetting) {
        return { interpreter, interpreterSource, command: executableSetting, args: [] };
    }
    const python = interpreter ?? DEFAULT_PYTHON;
    return {
        // With no interpreter known, `python3` runs the server and the server analyses its own
        // environment, so there is no environmentPath to send.
        interpreter,
        interpreterSource,
        command: python,
        args: ['-m', SERVER_MODULE],
    };
}

interface RunResult {
    code: number | null;
    stdout: string;
    stderr: string;
    spawnError?: NodeJS.ErrnoException;
}

function run(command: string, args: string[], timeoutMs: number): Promise<RunResult> {
    return new Promise((resolve) => {
        let stdout = '';
        let stderr = '';
        let settled = false;
        const finish = (result: RunResult) => {
            if (!settled) {
                settled = true;
                clearTimeout(timer);
                resolve(result);
            }
        };
        let child: ReturnType<typeof spawn>;
        try {
            child = spawn(command, args, { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, env: process.env });
        } catch (error) {
            resolve({ code: null, stdout, stderr, spawnError: error as NodeJS.ErrnoException });
            return;
        }
        const timer = setTimeout(() => {
            child.kill();
            finish({ code: null, stdout, stderr: stderr + `\n(timed out after ${timeoutMs} ms)` });
        }, timeoutMs);
        child.stdout?.on('data', (data) => (stdout += data.toString()));
        child.stderr?.on('data', (data) => (stderr += data.toString()));
        child.on('error', (error) => finish({ code: null, stdout, stderr, spawnError: error }));
        child.on('close', (code) => finish({ code, stdout, stderr }));
    });
}

// Exit 3: the interpreter runs but has no fabric_lsp; 4: the interpreter is too old; 5: fabric_lsp
// is there but a dependency is not (a broken install), named on the second output line.
const DEPENDENCIES = ['pygls', 'lsprotocol', 'jedi'];
const CHECK_SCRIPT = [
    'import sys',
    'print(sys.executable, "%d.%d.%d" % sys.version_info[:3])',
    'if sys.version_info < (3, 9): sys.exit(4)',
    'import importlib.util',
    `if not (importlib.util.find_spec("${SERVER_MODULE}") and importlib.util.find_spec("${SERVER_MODULE}.__main__")): sys.exit(3)`,
    `missing = [m for m in ${JSON.stringify(DEPENDENCIES)} if importlib.util.find_spec(m) is None]`,
    'if missing: print(" ".join(missing)); sys.exit(5)',
].join('\n');

/** Checks that the server can start; if not, shows one notification that says what to do. */
async function preflight(launch: Launch): Promise<boolean> {
    if (launch.args.length === 0) {
        // The fabric-lsp.path executable.
        if (!isExecutable(launch.command)) {
            await notify(
                `fabric-lsp: the server executable "${launch.command}" (setting fabric-lsp.path) was not found ` +
                    `or is not executable. Clear the setting to run "python -m fabric_lsp", or install the server ` +
                    `with "pip install ${PACKAGE}".`,
            );
            return false;
        }
        return true;
    }
    const python = launch.command;
    const result = await run(python, ['-c', CHECK_SCRIPT], 30000);
    if (result.stdout.trim()) {
        log(`interpreter check: ${result.stdout.trim()}`);
    }
    if (result.spawnError) {
        const where =
            launch.interpreterSource === 'setting'
                ? ' (setting fabric-lsp.interpreter)'
                : launch.interpreterSource === 'Python extension'
                  ? ' (selected in the Python extension)'
                  : '';
        await notify(
            `fabric-lsp: cannot start the server: the Python interpreter "${python}"${where} was not found. ` +
                `Select an interpreter with "Python: Select Interpreter" or set fabric-lsp.interpreter, ` +
                `then install the server into it with "<interpreter> -m pip install ${PACKAGE}".`,
        );
        return false;
    }
    if (result.code === 0) {
        return true;
    }
    if (result.code === 3) {
        const install = `${quote(python)} -m pip install ${PACKAGE}`;
        await notify(
            `fabric-lsp is not installed in the Python interpreter "${python}". Install it with: ${install}`,
            install,
        );
        return false;
    }
    const lines = result.stdout.trim().split('\n');
    if (result.code === 4) {
        await notify(
            `fabric-lsp needs Python 3.9 or newer; "${python}" is ${lines[0].split(' ').pop()}. ` +
                `Select another interpreter or set fabric-lsp.interpreter.`,
        );
        return false;
    }
    if (result.code === 5) {
        const install = `${quote(python)} -m pip install --force-reinstall ${PACKAGE}`;
        await notify(
            `fabric-lsp is installed in "${python}" but its dependencies are missing (${lines[1] ?? '?'}). ` +
                `Reinstall it with: ${install}`,
            install,
        );
        return false;
    }
    log(`interpreter check failed (exit code ${result.code}):\n${result.stderr}`);
    await notify(
        `fabric-lsp: cannot start the server: "${python}" failed to run (exit code ${result.code}). ` +
            `See the fabric-lsp output for details.`,
    );
    return false;
}

function isExecutable(command: string): boolean {
    const candidates = /[\\/]/.test(command)
        ? [command]
        : (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, command));
    const suffixes = process.platform === 'win32' ? ['', '.exe', '.cmd', '.bat'] : [''];
    return candidates.some((candidate) =>
        suffixes.some((suffix) => {
            try {
                fs.accessSync(candidate + suffix, fs.constants.X_OK);
                return fs.statSync(candidate + suffix).isFile();
            } catch {
                return false;
            }
        }),
    );
}

function quote(value: string): string {
    return /^[\w@%+=:,./-]+$/.test(value) ? value : `"${value.replace(/(["\\$`])/g, '\\$1')}"`;
}

/** Messages of the notifications on screen now: the same one is never shown twice at once. */
const shown = new Set<string>();

async function notify(message: string, installCommand?: string): Promise<void> {
    log(message);
    if (shown.has(message)) {
        return;
    }
    shown.add(message);
    const actions = installCommand
        ? ['Copy install command', 'Open Settings', 'Show Output']
        : ['Open Settings', 'Show Output'];
    // Not awaited: the notification stays until the user acts, and must not block a restart.
    void vscode.window.showErrorMessage(message, ...actions).then(async (choice) => {
        shown.delete(message);
        if (choice === 'Copy install command' && installCommand) {
            await vscode.env.clipboard.writeText(installCommand);
        } else if (choice === 'Open Settings') {
            await vscode.commands.executeCommand('workbench.action.openSettings', SECTION);
        } else if (choice === 'Show Output') {
            output.show(true);
        }
    });
}

/** Whether the user set `key` anywhere (user, workspace, folder, language-specific). */
function isSet(config: vscode.WorkspaceConfiguration, key: string): boolean {
    const inspected = config.inspect(key);
    return (
        !!inspected &&
        [
            inspected.globalValue,
            inspected.workspaceValue,
            inspected.workspaceFolderValue,
            inspected.globalLanguageValue,
            inspected.workspaceLanguageValue,
            inspected.workspaceFolderLanguageValue,
        ].some((value) => value !== undefined)
    );
}

/** The settings the server reads, under initializationOptions and workspace/didChangeConfiguration. */
function serverSettings(launch: Launch | undefined): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration(SECTION, resourceUri());
    const settings: Record<string, unknown> = {
        certainSeverity: config.get<string>('certainSeverity', 'error'),
        possibleSeverity: config.get<string>('possibleSeverity', 'warning'),
    };
    // Sent only when set: the server lets it override `report-unknown` in pyproject.toml.
    if (isSet(config, 'reportUnknown')) {
        settings.reportUnknown = config.get<boolean>('reportUnknown', false);
    }
    if (launch?.interpreter) {
        settings.environmentPath = launch.interpreter;
    }
    return settings;
}

async function pushSettings(): Promise<void> {
    if (client?.isRunning()) {
        await client.sendNotification(DidChangeConfigurationNotification.type, {
            settings: { [SECTION]: serverSettings(currentLaunch) },
        });
    }
}

function createClient(launch: Launch): LanguageClient {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    // No `transport`: the client then talks over stdio without appending `--stdio`.
    const serverOptions: ServerOptions = {
        command: launch.command,
        args: launch.args,
        options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };

    const restarts: number[] = [];
    let everRunning = false;
    const clientOptions: LanguageClientOptions = {
        documentSelector: [
            { scheme: 'file', language: 'python' },
            { scheme: 'untitled', language: 'python' },
        ],
        outputChannel: output,
        traceOutputChannel: output,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        initializationOptions: serverSettings(launch),
        middleware: {
            workspace: {
                // Servers that pull settings get the same object as with didChangeConfiguration.
                configuration: async (params, token, next) => {
                    const result = await next(params, token);
                    if (!Array.isArray(result)) {
                        return result;
                    }
                    return result.map((value, index) =>
                        params.items[index]?.section === SECTION ? serverSettings(launch) : value,
                    );
                },
            },
        },
        errorHandler: {
            // Write errors (EPIPE when the server died) go to the output, not to a notification:
            // `closed` below decides what the user is told.
            error: (error): ErrorHandlerResult => {
                log(`connection error: ${describe(error)}`);
                return { action: ErrorAction.Continue, handled: true };
            },
            closed: (): CloseHandlerResult => {
                if (!everRunning) {
                    // It died while starting (vscode-languageclient then shows its one notification
                    // "couldn't create connection to server"; the server's traceback is in the
                    // output): restarting would only repeat that.
                    log('the server exited before it finished starting; not restarting it');
                    return { action: CloseAction.DoNotRestart, handled: true };
                }
                const now = Date.now();
                restarts.push(now);
                while (restarts.length && restarts[0] < now - RESTART_WINDOW_MS) {
                    restarts.shift();
                }
                if (restarts.length <= MAX_RESTARTS) {
                    return {
                        action: CloseAction.Restart,
                        message: 'fabric-lsp server exited; restarting it.',
                        handled: true,
                    };
                }
                return {
                    action: CloseAction.DoNotRestart,
                    message:
                        `The fabric-lsp server crashed ${restarts.length} times in the last 3 minutes and will not be ` +
                        `restarted. See the fabric-lsp output, then run "fabric-lsp: Restart server".`,
                };
            },
        },
    };
    const languageClient = new LanguageClient(SECTION, 'fabric-lsp', serverOptions, clientOptions);
    languageClient.onDidChangeState((event) => {
        if (event.newState === State.Running) {
            everRunning = true;
        }
    });
    return languageClient;
}

function log(message: string): void {
    output?.appendLine(`[client ${new Date().toISOString()}] ${message}`);
}

function describe(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}
