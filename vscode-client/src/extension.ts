// VS Code client for fabric-lsp: starts the server bundled in the extension (or the user's own, see
// launch.ts) on stdio with the interpreter the user works with, and forwards the settings.
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
import { Bundle, Launch, Ready, SECTION, isProblem, preflight, resolveLaunch, resourceUri, workspaceFolder } from './launch';
import { onDidChangeInterpreter } from './python';

const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

let output: vscode.OutputChannel;
let client: LanguageClient | undefined;
let current: Ready | undefined;
/** The launch the settings asked for when `current` started (fromEnvironment may fall back). */
let requested: Launch | undefined;
let bundle: Bundle;
let queue: Promise<void> = Promise.resolve();

export function activate(context: vscode.ExtensionContext): void {
    output = vscode.window.createOutputChannel('fabric-lsp');
    context.subscriptions.push(output);
    bundle = new Bundle(context.extensionPath);

    context.subscriptions.push(
        vscode.commands.registerCommand('fabric-lsp.restart', () => schedule('restart command')),
        vscode.commands.registerCommand('fabric-lsp.showOutput', () => output.show(true)),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (['interpreter', 'path', 'importStrategy'].some((key) => event.affectsConfiguration(`${SECTION}.${key}`))) {
                void schedule('interpreter, path or importStrategy setting changed');
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
    const launch = await resolveLaunch(bundle);
    if (onlyIfChanged && client?.isRunning() && sameLaunch(requested, launch)) {
        log(`${reason}: the server already runs with ${launch.command}; kept`);
        return;
    }
    log(`(re)starting the server: ${reason}`);
    await stopClient();
    current = undefined;
    requested = undefined;
    log(`interpreter: ${launch.interpreter ?? '(none)'} (from ${launch.interpreterSource})`);
    const ready = await preflight(launch, bundle, log);
    if (isProblem(ready)) {
        await notify(ready.message, ready.installCommand);
        return;
    }
    current = ready;
    requested = launch;
    log(`server: ${ready.description}`);
    log(`command: ${[ready.launch.command, ...ready.launch.args].join(' ')}`);
    log(`analysed environment: ${ready.environmentPath ?? "(the server's own)"}`);
    const newClient = createClient(ready);
    client = newClient;
    try {
        await newClient.start();
        const info = newClient.initializeResult?.serverInfo;
        log(`server started${info ? `: ${info.name} ${info.version ?? ''}`.trimEnd() : ''}`);
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
function serverSettings(ready: Ready | undefined): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration(SECTION, resourceUri());
    const settings: Record<string, unknown> = {
        certainSeverity: config.get<string>('certainSeverity', 'error'),
        possibleSeverity: config.get<string>('possibleSeverity', 'warning'),
    };
    // Sent only when set: the server lets it override `report-unknown` in pyproject.toml.
    if (isSet(config, 'reportUnknown')) {
        settings.reportUnknown = config.get<boolean>('reportUnknown', false);
    }
    if (ready?.environmentPath) {
        settings.environmentPath = ready.environmentPath;
    }
    return settings;
}

async function pushSettings(): Promise<void> {
    if (client?.isRunning()) {
        await client.sendNotification(DidChangeConfigurationNotification.type, {
            settings: { [SECTION]: serverSettings(current) },
        });
    }
}

function createClient(ready: Ready): LanguageClient {
    const { launch } = ready;
    const cwd = workspaceFolder();
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
            // Jupyter notebook cells: the server syncs the notebook (notebookDocument/*) and
            // answers code actions and hover in its Python cells.
            { scheme: 'vscode-notebook-cell', language: 'python' },
            // batch-job scripts (FAB010): the findings of the Python files they launch, on their lines
            { scheme: 'file', language: 'shellscript' },
            { scheme: 'file', pattern: '**/*.{sbatch,slurm}' },
        ],
        outputChannel: output,
        traceOutputChannel: output,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        initializationOptions: serverSettings(ready),
        middleware: {
            workspace: {
                // Servers that pull settings get the same object as with didChangeConfiguration.
                configuration: async (params, token, next) => {
                    const result = await next(params, token);
                    if (!Array.isArray(result)) {
                        return result;
                    }
                    return result.map((value, index) =>
                        params.items[index]?.section === SECTION ? serverSettings(ready) : value,
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
