// Packages the extension as `npm run package` does and checks the .vsix: it holds the bundled
// extension and server, nothing from the sources, and the packaged server answers over IPC.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SessionCommands, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dshAnswersFile, fixtureStore } from '../../test/support/conformance';
import { buildHeldIndexServer, holdArgument } from '../../test/support/heldIndexServerBuild';
import { instantiateWasmZstd } from '../../server/src/store/log/zstdWasm';
import { markdownLinks, pngSize } from './testing/marketplace';
import { readZipEntries, type ZipEntry } from './testing/zipArchive';


const extensionRoot = path.join(__dirname, '..');
const manifest = JSON.parse(readFileSync(path.join(extensionRoot, 'package.json'), 'utf8'));
const serverVersion: string = JSON.parse(readFileSync(path.join(extensionRoot, '..', 'server', 'package.json'), 'utf8')).version;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'dsh-vsix-'));
let entries: ZipEntry[] = [];

function entry(name: string): ZipEntry {
  const found = entries.find((e) => e.name === name);
  if (!found) throw new Error(`${name} is not in the .vsix (has: ${entries.map((e) => e.name).join(', ')})`);
  return found;
}

beforeAll(() => {
  const vsix = path.join(scratch, 'extension.vsix');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, ['run', 'package', '--', '--out', vsix], { cwd: extensionRoot, stdio: 'pipe', env: { ...process.env, npm_config_offline: 'true' } });
  entries = readZipEntries(readFileSync(vsix));
}, 120_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the packaged .vsix', () => {
  it('holds the manifest, the bundled extension and the bundled server', () => {
    const packaged = JSON.parse(entry('extension/package.json').read().toString('utf8'));
    expect(packaged.name).toBe(manifest.name);
    expect(entry(`extension/${packaged.main.replace(/^\.\//, '')}`).read().length).toBeGreaterThan(0);
    expect(entry('extension/dist/server.js').read().length).toBeGreaterThan(0);
    // The index reads transcripts on worker threads from this file (without it, on the main thread).
    expect(entry('extension/dist/summarizeWorker.js').read().length).toBeGreaterThan(0);
    expect(entry('extension/syntaxes/dsh-prompt.tmLanguage.json').read().length).toBeGreaterThan(0);
    expect(entries.map((e) => e.name)).toEqual(expect.arrayContaining(['extension.vsixmanifest', 'extension/LICENSE.txt', 'extension/readme.md']));
  });

  it("holds libzstd's wasm build beside the server, and it loads as a zstd decoder", async () => {
    expect(await instantiateWasmZstd(entry('extension/dist/zstd.wasm').read())).toBeDefined();
  });

  it('holds nothing from the sources, no source maps and no node_modules', () => {
    const unwanted = entries.map((e) => e.name).filter((name) => /\/src\/|\/scripts\/|\.map$|\.ts$|\.test\.|node_modules|esbuild\.mjs|tsconfig/.test(name));
    expect(unwanted).toEqual([]);
  });

  it('holds exactly the files a user needs', () => {
    expect(entries.map((e) => e.name).sort()).toEqual(
      [
        '[Content_Types].xml',
        'extension.vsixmanifest',
        'extension/LICENSE.txt',
        'extension/changelog.md',
        'extension/dist/extension.js',
        'extension/dist/server.js',
        'extension/dist/summarizeWorker.js',
        'extension/dist/zstd.wasm',
        'extension/images/completion.png',
        'extension/images/icon.png',
        'extension/package.json',
        'extension/readme.md',
        'extension/syntaxes/dsh-prompt.tmLanguage.json',
      ].sort(),
    );
  });

  describe('its Marketplace listing (extension.vsixmanifest)', () => {
    let vsixManifest = '';
    beforeAll(() => {
      vsixManifest = entry('extension.vsixmanifest').read().toString('utf8');
    });
    const repositoryUrl = String(manifest.repository?.url).replace(/\.git$/, '');

    it('names the publisher, the categories and the keywords', () => {
      expect(vsixManifest).toMatch(new RegExp(`<Identity [^>]*Publisher="${manifest.publisher}"`));
      expect(/<Categories>([^<]*)<\/Categories>/.exec(vsixManifest)?.[1]).toBe((manifest.categories as string[]).join(','));
      const tags = /<Tags>([^<]*)<\/Tags>/.exec(vsixManifest)?.[1]?.split(',');
      expect(tags).toEqual(expect.arrayContaining(manifest.keywords as string[]));
    });

    it('links the repository and the issues', () => {
      expect(vsixManifest).toContain(`<Property Id="Microsoft.VisualStudio.Services.Links.Source" Value="${manifest.repository?.url}" />`);
      expect(vsixManifest).toContain(`<Property Id="Microsoft.VisualStudio.Services.Links.Support" Value="${repositoryUrl}/issues" />`);
    });

    it('has the packaged icon, a 128×128 or 256×256 PNG', () => {
      expect(/<Icon>([^<]*)<\/Icon>/.exec(vsixManifest)?.[1]).toBe(`extension/${manifest.icon}`);
      expect(vsixManifest).toContain(`<Asset Type="Microsoft.VisualStudio.Services.Icons.Default" Path="extension/${manifest.icon}"`);
      const { width, height } = pngSize(entry(`extension/${manifest.icon}`).read());
      expect([128, 256]).toContain(width);
      expect(height).toBe(width);
    });

    it('has the CHANGELOG and the LICENSE as assets', () => {
      expect(vsixManifest).toContain('<Asset Type="Microsoft.VisualStudio.Services.Content.Changelog" Path="extension/changelog.md"');
      expect(vsixManifest).toContain('<Asset Type="Microsoft.VisualStudio.Services.Content.License" Path="extension/LICENSE.txt"');
      expect(entry('extension/changelog.md').read().toString('utf8')).toContain(`## ${manifest.version}`);
      expect(entry('extension/LICENSE.txt').read().toString('utf8')).toMatch(/^MIT License/);
    });

    it('has a README whose screenshot is in the package and whose links all lead somewhere', () => {
      const readme = entry('extension/readme.md').read().toString('utf8');
      const links = markdownLinks(readme);
      const images = `${repositoryUrl}/raw/HEAD/client-vscode/`;
      const files = `${repositoryUrl}/blob/HEAD/client-vscode/`;
      expect(links.filter((link) => link.image && link.target.startsWith(images)).length).toBeGreaterThan(0);
      for (const { image, target } of links) {
        // The Marketplace shows images over HTTPS only; a relative link would be broken there.
        expect(target, 'an absolute https link').toMatch(/^https:\/\//);
        if (target.startsWith(images)) {
          expect(image, target).toBe(true);
          expect(pngSize(entry(`extension/${target.slice(images.length)}`).read()).width, target).toBeGreaterThan(0);
        }
        // A file of the repository, so not a session mention vsce took for a link (`@[title](dsh-session:…)`).
        if (target.startsWith(files)) expect(existsSync(path.join(extensionRoot, target.slice(files.length).replace(/#.*$/, ''))), target).toBe(true);
      }
      // The mentions it shows survive packaging.
      expect(readme).toContain('<code>@[title]&#40;dsh-session:…)</code>');
    });
  });

  it('keeps vscode out of the extension bundle (VS Code provides it)', () => {
    const bundle = entry('extension/dist/extension.js').read().toString('utf8');
    expect(bundle).toMatch(/require\(["']vscode["']\)/);
  });

  describe('its server, started as the extension starts it (node, --node-ipc)', () => {
    let server: ChildProcess;
    let fixtureRoot: string;
    const waiting = new Map<number, { resolve(answer: { result?: any; error?: any }): void; reject(error: Error): void }>();

    function request(id: number, method: string, params: unknown): Promise<{ result?: any; error?: any }> {
      const answered = new Promise<{ result?: any; error?: any }>((resolve, reject) => waiting.set(id, { resolve, reject }));
      server.send({ jsonrpc: '2.0', id, method, params });
      return answered;
    }

    beforeAll(() => {
      const serverFile = path.join(scratch, 'server.js');
      writeFileSync(serverFile, entry('extension/dist/server.js').read());
      writeFileSync(path.join(scratch, 'summarizeWorker.js'), entry('extension/dist/summarizeWorker.js').read());
        writeFileSync(path.join(scratch, 'zstd.wasm'), entry('extension/dist/zstd.wasm').read());
      fixtureRoot = mkdtempSync(path.join(scratch, 'sessions-'));
      // The zstd copy of the fixture store, so the packaged server must decode zstd.
      cpSync(fixtureStore('zstd'), fixtureRoot, { recursive: true });
      server = fork(serverFile, ['--node-ipc', `--clientProcessId=${process.pid}`], { silent: true });
      server.on('message', (message: { id?: number; result?: unknown; error?: unknown }) => {
        const pending = typeof message.id === 'number' ? waiting.get(message.id) : undefined;
        if (pending && ('result' in message || 'error' in message)) pending.resolve(message);
      });
      server.on('exit', (code) => {
        for (const pending of waiting.values()) pending.reject(new Error(`the packaged server exited (${code}) before answering`));
      });
    });

    afterAll(() => {
      if (server.exitCode === null) server.kill();
    });

    let capabilities: any;

    it('initializes, offering @ completion', async () => {
      const { result } = await request(1, 'initialize', {
        processId: process.pid,
        rootUri: null,
        capabilities: {},
        initializationOptions: { sessionsRoot: fixtureRoot },
      });
      capabilities = result.capabilities;
      expect(capabilities.completionProvider.triggerCharacters).toContain('@');
      // The server's own version, not the extension manifest's that sits next to the bundle.
      expect(result.serverInfo).toEqual({ name: 'dsh-session-ls', version: serverVersion });
      server.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
    });

    it('offers every dshSession command (the extension calls candidates, preview and transcript)', () => {
      expect(capabilities?.executeCommandProvider?.commands).toEqual(expect.arrayContaining(Object.values(SessionCommands)));
    });

    it('runs a command', async () => {
      const { result } = await request(2, 'workspace/executeCommand', {
        command: 'dshSession.formatMention',
        arguments: [{ sessionId: 's-1', label: 'A [b]' }],
      });
      expect(result).toBe(formatSessionReferenceMention({ sessionId: 's-1', label: 'A [b]' }));
    });

    it('lists the zstd fixture store as dsh does', async () => {
      const rows = readFileSync(dshAnswersFile(), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      const row = rows.find((candidate) => candidate.request.op === 'list' && candidate.request.args.length === 1 && !candidate.request.target);
      const expected = row.response.result;
      // The index fills in the background: ask until every session is listed (or a generous deadline).
      let listed: Array<Record<string, unknown>> = [];
      for (let id = 100, deadline = Date.now() + 30_000; Date.now() < deadline; id++) {
        const { result } = await request(id, 'workspace/executeCommand', {
          command: SessionCommands.candidates,
          arguments: [{ query: row.request.args[0], target: { sessionId: null, cwd: row.request.cwd } }],
        });
        listed = result.map(({ mention: _mention, ...candidate }: Record<string, unknown>) => candidate);
        if (listed.length >= expected.length) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(listed).toEqual(expected);
      expect(row.response.result.length).toBeGreaterThan(3);
    });

    it('prints the server version with --version', () => {
      expect(execFileSync(process.execPath, [path.join(scratch, 'server.js'), '--version'], { encoding: 'utf8' })).toBe(`${serverVersion}\n`);
    });

    it('shuts down when asked', async () => {
      const { error } = await request(3, 'shutdown', null);
      expect(error).toBeUndefined();
      server.send({ jsonrpc: '2.0', method: 'exit' });
      await new Promise<void>((resolve) => (server.exitCode !== null ? resolve() : server.once('exit', () => resolve())));
      expect(server.exitCode).toBe(0);
    });
  });

  // Held: the server built from the same sources as the extension's (node18), beside the packaged
  // workers, with the held-index store double (test/support/heldIndexServer.ts): the store lists
  // nothing while a file exists, so the answer also tells a server that waits from one answering
  // from an unfinished index.
  it.each([false, true])('its server answers dshSession.candidates at once after initialize with the full answer (index held: %s)', async (held) => {
    const serverFile = path.join(scratch, 'server.js');
    writeFileSync(serverFile, entry('extension/dist/server.js').read());
    writeFileSync(path.join(scratch, 'summarizeWorker.js'), entry('extension/dist/summarizeWorker.js').read());
    writeFileSync(path.join(scratch, 'zstd.wasm'), entry('extension/dist/zstd.wasm').read());
    const store = path.join(extensionRoot, '..', 'examples', 'store');
    const cwd = '/home/sam/weather-app';
    const holdFile = path.join(mkdtempSync(path.join(scratch, 'hold-')), 'hold');
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: mkdtempSync(path.join(scratch, 'cache-')) };
    // The full answer: the packaged CLI's, which waits for the whole index.
    const full = JSON.parse(
      execFileSync(process.execPath, [serverFile, 'candidates', '--root', store, '--cwd', cwd, '--limit', '1000', '--json'], { encoding: 'utf8', env }),
    ) as unknown[];
    expect(full.length).toBeGreaterThan(0);
    let started = serverFile;
    const args = ['--node-ipc', `--clientProcessId=${process.pid}`];
    if (held) {
      writeFileSync(holdFile, '');
      started = await buildHeldIndexServer(scratch, { workers: false, target: 'node18' });
      args.push(holdArgument(holdFile));
    }
    const server = fork(started, args, { silent: true, env });
    try {
      const answers = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
      let waiting!: () => void;
      const progressBegun = new Promise<void>((resolve) => (waiting = resolve));
      server.on('message', (message: { id?: number; method?: string; params?: any; result?: unknown; error?: unknown }) => {
        if (typeof message.id === 'number' && message.method === undefined) answers.get(message.id)?.(message);
        if (message.method === '$/progress' && message.params?.token === 'wait' && message.params.value?.kind === 'begin') waiting();
      });
      const request = (id: number, method: string, params: unknown) =>
        new Promise<{ result?: unknown; error?: unknown }>((resolve) => {
          answers.set(id, resolve);
          server.send({ jsonrpc: '2.0', id, method, params });
        });
      await request(1, 'initialize', {
        processId: process.pid,
        rootUri: `file://${cwd}`,
        workspaceFolders: [{ uri: `file://${cwd}`, name: 'weather-app' }],
        capabilities: {},
        initializationOptions: { sessionsRoot: store },
      });
      server.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
      const answer = request(2, 'workspace/executeCommand', { command: 'dshSession.candidates', arguments: [{ limit: 1000 }], workDoneToken: 'wait' });
      if (held) {
        await progressBegun;
        rmSync(holdFile);
      }
      expect((await answer).result).toEqual(full);
    } finally {
      server.kill();
    }
  });
});
