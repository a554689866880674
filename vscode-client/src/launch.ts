// How the server is started: which server (the one bundled in the extension, the one installed in
// the user's interpreter, or the fabric-lsp.path executable), with which Python, and whether that
// can work (checked before starting, so that a problem is reported once, in words).
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { selectedInterpreter } from './python';

export const SECTION = 'fabric-lsp';
const SERVER_MODULE = 'fabric_lsp';
const PACKAGE = 'fabric-lsp';
const DEFAULT_PYTHON = process.platform === 'win32' ? 'python' : 'python3';

export type InterpreterSource = 'setting' | 'Python extension' | 'default';
/** bundled: bundled/libs run by the interpreter; environment: `<interpreter> -m fabric_lsp`;
 * executable: the fabric-lsp.path setting. */
export type ServerKind = 'bundled' | 'environment' | 'executable';

export interface Launch {
    kind: ServerKind;
    /** The interpreter the user works with, as configured or selected (undefined: none known). */
    interpreter: string | undefined;
    interpreterSource: InterpreterSource;
    command: string;
    args: string[];
}

/** A launch that passed its check. */
export interface Ready {
    launch: Launch;
    /** The interpreter whose environment jedi analyses (sent as environmentPath). */
    environmentPath: string | undefined;
    /** Which server runs, with paths and versions, for the output channel. */
    description: string;
}

/** Why the server cannot start, for one notification. */
export interface Problem {
    message: string;
    installCommand?: string;
}

type Log = (message: string) => void;

export function resourceUri(): vscode.Uri | undefined {
    return vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
}

export function workspaceFolder(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function expand(value: string): string {
    let result = value.trim();
    const folder = workspaceFolder();
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

/** The bundled server: bundled/tool/fabric_lsp_server.py puts bundled/libs first on its sys.path. */
export class Bundle {
    constructor(private readonly extensionPath: string) {}

    get launcher(): string {
        return path.join(this.extensionPath, 'bundled', 'tool', 'fabric_lsp_server.py');
    }

    get libs(): string {
        return path.join(this.extensionPath, 'bundled', 'libs');
    }

    /** "name version" of each bundled distribution, fabric-lsp first ([] when not bundled). */
    versions(): string[] {
        let entries: string[];
        try {
            entries = fs.readdirSync(this.libs);
        } catch {
            return [];
        }
        const found = entries
            .map((entry) => /^(.+)-([^-]+)\.dist-info$/.exec(entry))
            .filter((match): match is RegExpExecArray => match !== null)
            .map((match) => `${match[1].replace(/_/g, '-')} ${match[2]}`)
            .sort();
        return [...found.filter((item) => item.startsWith(`${PACKAGE} `)), ...found.filter((item) => !item.startsWith(`${PACKAGE} `))];
    }
}

export async function resolveLaunch(bundle: Bundle): Promise<Launch> {
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
        return { kind: 'executable', interpreter, interpreterSource, command: executableSetting, args: [] };
    }
    const python = interpreter ?? DEFAULT_PYTHON;
    if (config.get<string>('importStrategy', 'useBundled') === 'fromEnvironment') {
        return { kind: 'environment', interpreter, interpreterSource, command: python, args: ['-m', SERVER_MODULE] };
    }
    return bundledLaunch(bundle, interpreter, interpreterSource);
}

function bundledLaunch(bundle: Bundle, interpreter: string | undefined, interpreterSource: InterpreterSource): Launch {
    // -I (isolated): the user's PYTHONPATH and user site-packages cannot replace a bundled module
    // in the server's process; the analysed environment (jedi's subprocess) still has them.
    return {
        kind: 'bundled',
        interpreter,
        interpreterSource,
        command: interpreter ?? DEFAULT_PYTHON,
        args: ['-I', bundle.launcher],
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
            child = spawn(command, args, { cwd: workspaceFolder(), env: process.env });
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

// Prints sys.executable and the Python version, one a line. Exit 4: Python is too old. Then, for
// the installed server only: exit 3, the interpreter has no fabric_lsp; exit 5, fabric_lsp is there
// but a dependency is not (a broken install), named on the third line; exit 0 prints its version
// and folder. Written for any Python 3, so that an old one gets to exit 4.
const DEPENDENCIES = ['pygls', 'lsprotocol', 'jedi'];
const CHECK_SCRIPT = [
    'import sys',
    'print(sys.executable)',
    'print("%d.%d.%d" % sys.version_info[:3])',
    'if sys.version_info < (3, 9): sys.exit(4)',
    'if sys.argv[1] == "bundled": sys.exit(0)',
    'import importlib.util',
    `spec = importlib.util.find_spec("${SERVER_MODULE}")`,
    `if not (spec and importlib.util.find_spec("${SERVER_MODULE}.__main__")): sys.exit(3)`,
    `missing = [m for m in ${JSON.stringify(DEPENDENCIES)} if importlib.util.find_spec(m) is None]`,
    'if missing: print(" ".join(missing)); sys.exit(5)',
    'try:',
    '    from importlib.metadata import version',
    `    print(version("${PACKAGE}"))`,
    'except Exception:',
    '    print("(version unknown)")',
    'print(list(spec.submodule_search_locations or [spec.origin])[0])',
].join('\n');

function quote(value: string): string {
    return /^[\w@%+=:,./-]+$/.test(value) ? value : `"${value.replace(/(["\\$`])/g, '\\$1')}"`;
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

function whereInterpreter(launch: Launch): string {
    if (launch.interpreterSource === 'setting') {
        return ' (setting fabric-lsp.interpreter)';
    }
    return launch.interpreterSource === 'Python extension' ? ' (selected in the Python extension)' : '';
}

/**
 * Checks that the server can start. Returns what to start (with importStrategy fromEnvironment and
 * no fabric-lsp in the interpreter: the bundled server), or the problem to tell the user about.
 */
export async function preflight(launch: Launch, bundle: Bundle, log: Log): Promise<Ready | Problem> {
    if (launch.kind === 'executable') {
        return checkExecutable(launch);
    }
    const python = launch.command;
    const bundled = launch.kind === 'bundled';
    if (bundled && bundle.versions().length === 0) {
        return {
            message:
                `fabric-lsp: this copy of the extension has no bundled server (${bundle.libs} is missing). ` +
                `Build the extension with "npm run package", or set fabric-lsp.importStrategy to "fromEnvironment".`,
        };
    }
    const result = await run(python, [...(bundled ? ['-I'] : []), '-c', CHECK_SCRIPT, launch.kind], 30000);
    const lines = result.stdout.trim().split(/\r?\n/);
    if (result.stdout.trim()) {
        log(`interpreter check: ${lines.join(' | ')}`);
    }
    if (result.spawnError) {
        return {
            message:
                `fabric-lsp: cannot start the server: the Python interpreter "${python}"${whereInterpreter(launch)} ` +
                `was not found. Select a Python 3.9 or newer with "Python: Select Interpreter" or set fabric-lsp.interpreter.`,
        };
    }
    const [executable, version] = lines;
    if (result.code === 4) {
        return {
            message:
                `fabric-lsp needs Python 3.9 or newer; "${python}"${whereInterpreter(launch)} is ${version}. ` +
                `Select another interpreter or set fabric-lsp.interpreter.`,
        };
    }
    if (result.code === 0 && bundled) {
        return {
            launch,
            environmentPath: executable,
            description: `bundled with the extension: ${bundle.versions().join(', ')} in ${bundle.libs}; run by ${executable} (Python ${version})`,
        };
    }
    if (result.code === 0) {
        return {
            launch,
            environmentPath: executable,
            description: `installed in the interpreter: ${PACKAGE} ${lines[2]} in ${lines[3]}; run by ${executable} (Python ${version})`,
        };
    }
    return environmentProblem(launch, bundle, result, log);
}

async function environmentProblem(launch: Launch, bundle: Bundle, result: RunResult, log: Log): Promise<Ready | Problem> {
    const python = launch.command;
    if (result.code === 3) {
        // importStrategy fromEnvironment falls back to the bundled server, as ruff's and the
        // python-tools extensions do.
        log(`${PACKAGE} is not installed in ${python} (importStrategy fromEnvironment); using the bundled server`);
        return preflight(bundledLaunch(bundle, launch.interpreter, launch.interpreterSource), bundle, log);
    }
    if (result.code === 5) {
        const install = `${quote(python)} -m pip install --force-reinstall ${PACKAGE}`;
        const missing = result.stdout.trim().split(/\r?\n/)[2] ?? '?';
        return {
            message:
                `fabric-lsp is installed in "${python}" but its dependencies are missing (${missing}). ` +
                `Reinstall it with: ${install}, or set fabric-lsp.importStrategy to "useBundled".`,
            installCommand: install,
        };
    }
    log(`interpreter check failed (exit code ${result.code}):\n${result.stderr}`);
    return {
        message:
            `fabric-lsp: cannot start the server: "${python}" failed to run (exit code ${result.code}). ` +
            `See the fabric-lsp output for details.`,
    };
}

function checkExecutable(launch: Launch): Ready | Problem {
    if (!isExecutable(launch.command)) {
        return {
            message:
                `fabric-lsp: the server executable "${launch.command}" (setting fabric-lsp.path) was not found ` +
                `or is not executable. Clear the setting to use the server bundled with the extension.`,
        };
    }
    return {
        launch,
        // The server runs as installed; the interpreter, when one is known, is still the analysed one.
        environmentPath: launch.interpreter,
        description: `the fabric-lsp.path executable ${launch.command}`,
    };
}

export function isProblem(value: Ready | Problem): value is Problem {
    return 'message' in value;
}
