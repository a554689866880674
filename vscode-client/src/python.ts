// The interpreter the user works with, as the Python extension (ms-python.python) reports it.
//
// Uses the extension's exported API directly (the shape published by `@vscode/python-extension`)
// instead of depending on that npm package, which requires VS Code >= 1.93 and Node >= 22.
import * as vscode from 'vscode';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

interface EnvironmentPath {
    readonly id: string;
    readonly path: string;
}

interface ResolvedEnvironment {
    readonly executable: { readonly uri: vscode.Uri | undefined };
}

interface PythonExtensionApi {
    readonly environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
        resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
        readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
    };
    // Older releases (before the environments API) only had this one.
    readonly settings?: {
        getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
        readonly onDidChangeExecutionDetails: vscode.Event<vscode.Uri | undefined>;
    };
}

async function pythonApi(): Promise<PythonExtensionApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
    if (!extension) {
        return undefined;
    }
    try {
        return extension.isActive ? extension.exports : await extension.activate();
    } catch {
        return undefined;
    }
}

/** Path of the selected interpreter, or undefined when the Python extension is absent or has none. */
export async function selectedInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
    const api = await pythonApi();
    if (!api) {
        return undefined;
    }
    try {
        if (api.environments) {
            const active = api.environments.getActiveEnvironmentPath(resource);
            const resolved = await api.environments.resolveEnvironment(active);
            const executable = resolved?.executable.uri?.fsPath;
            if (executable) {
                return executable;
            }
            return active.path || undefined;
        }
        const command = api.settings?.getExecutionDetails(resource).execCommand;
        // execCommand can be e.g. ["conda", "run", ...]; only a single executable is usable here.
        if (command && command.length === 1 && command[0]) {
            return command[0];
        }
    } catch {
        // A broken or still-loading Python extension must not stop the language server.
    }
    return undefined;
}

/** Fires when the user selects another interpreter in the Python extension. */
export async function onDidChangeInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
    const api = await pythonApi();
    if (api?.environments) {
        return api.environments.onDidChangeActiveEnvironmentPath(() => listener());
    }
    if (api?.settings) {
        return api.settings.onDidChangeExecutionDetails(() => listener());
    }
    return undefined;
}
