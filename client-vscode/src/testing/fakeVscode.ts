// A minimal stand-in for the `vscode` module (VS Code itself cannot run here): just the API the
// extension touches, recording calls so tests can check what the extension asked the editor to do.

type Listener<T> = (value: T) => unknown;

/** A `vscode.Disposable`. */
export class Disposable {
  constructor(private readonly onDispose: () => void = () => {}) {}
  dispose(): void {
    this.onDispose();
  }
}

/** A `vscode.EventEmitter`. */
export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => (this.listeners = this.listeners.filter((l) => l !== listener)));
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }
  dispose(): void {
    this.listeners = [];
  }
}

/** A `vscode.Uri` holding its parts; `toString` is a plain `scheme:path?query`. */
export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query: string,
  ) {}
  static from(parts: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(parts.scheme, parts.path ?? '', parts.query ?? '');
  }
  static parse(text: string): Uri {
    const colon = text.indexOf(':');
    const rest = text.slice(colon + 1);
    const question = rest.indexOf('?');
    return question === -1
      ? new Uri(text.slice(0, colon), rest.replace(/^\/\//, ''), '')
      : new Uri(text.slice(0, colon), rest.slice(0, question).replace(/^\/\//, ''), rest.slice(question + 1));
  }
  static file(path: string): Uri {
    return new Uri('file', path, '');
  }
  toString(): string {
    const path = this.scheme === 'file' ? '//' + this.path : this.path;
    return `${this.scheme}:${path}${this.query ? '?' + this.query : ''}`;
  }
}

/** A `vscode.Position`. */
export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
  translate(lineDelta = 0, characterDelta = 0): Position {
    return new Position(this.line + lineDelta, this.character + characterDelta);
  }
}

/** A `vscode.Range`. */
export class Range {
  constructor(
    readonly start: Position,
    readonly end: Position,
  ) {}
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

/** A `vscode.Selection` (anchor = start, active = end). */
export class Selection extends Range {
  get anchor(): Position {
    return this.start;
  }
  get active(): Position {
    return this.end;
  }
}

/** A `vscode.CancellationTokenSource`. */
export class CancellationTokenSource {
  private readonly cancelled = new EventEmitter<void>();
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.cancelled.event,
  };
  cancel(): void {
    if (this.token.isCancellationRequested) return;
    this.token.isCancellationRequested = true;
    this.cancelled.fire();
  }
  dispose(): void {
    this.cancelled.dispose();
  }
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}

/** An in-memory `vscode.TextDocument` over LF text. */
export class FakeTextDocument {
  constructor(
    readonly uri: Uri,
    readonly languageId: string,
    private text: string,
  ) {}
  getText(): string {
    return this.text;
  }
  setText(text: string): void {
    this.text = text;
  }
  lineAt(line: number): { text: string } {
    return { text: this.text.split('\n')[line] ?? '' };
  }
  offsetAt(position: Position): number {
    const lines = this.text.split('\n');
    let offset = 0;
    for (let i = 0; i < position.line; i++) offset += lines[i]!.length + 1;
    return offset + position.character;
  }
}

/** An in-memory `vscode.TextEditor` whose `edit` applies the replacements to its document. */
export class FakeTextEditor {
  constructor(
    readonly document: FakeTextDocument,
    public selections: Selection[],
  ) {}
  get selection(): Selection {
    return this.selections[0]!;
  }
  async edit(build: (edit: { replace(range: Range, text: string): void }) => void): Promise<boolean> {
    const replacements: Array<{ start: number; end: number; text: string }> = [];
    build({
      replace: (range, text) =>
        replacements.push({ start: this.document.offsetAt(range.start), end: this.document.offsetAt(range.end), text }),
    });
    let text = this.document.getText();
    for (const r of replacements.sort((a, b) => b.start - a.start)) text = text.slice(0, r.start) + r.text + text.slice(r.end);
    this.document.setText(text);
    return true;
  }
}

/** The quick pick the extension builds, driven by tests through `type`, `accept` and `hide`. */
export class FakeQuickPick<T extends { label: string }> {
  title?: string;
  placeholder?: string;
  matchOnDescription = false;
  matchOnDetail = false;
  busy = false;
  items: readonly T[] = [];
  selectedItems: readonly T[] = [];
  value = '';
  shown = false;
  disposed = false;
  private readonly valueChanges = new EventEmitter<string>();
  private readonly accepts = new EventEmitter<void>();
  private readonly hides = new EventEmitter<void>();
  readonly onDidChangeValue = this.valueChanges.event;
  readonly onDidAccept = this.accepts.event;
  readonly onDidHide = this.hides.event;
  show(): void {
    this.shown = true;
  }
  hide(): void {
    if (!this.shown) return;
    this.shown = false;
    this.hides.fire();
  }
  dispose(): void {
    this.disposed = true;
  }
  /** The user types a new filter value. */
  type(value: string): void {
    this.value = value;
    this.valueChanges.fire(value);
  }
  /** The user accepts an item. */
  accept(item: T): void {
    this.selectedItems = [item];
    this.accepts.fire();
  }
}

/** What the fake editor recorded; reset before each test with `resetFakeVscode`. */
export const recorded = {
  commands: new Map<string, (...args: any[]) => unknown>(),
  contentProviders: new Map<string, { provideTextDocumentContent(uri: Uri): unknown; onDidChange?: unknown }>(),
  quickPicks: [] as FakeQuickPick<any>[],
  statusItems: [] as Array<Record<string, any>>,
  errors: [] as string[],
  infos: [] as string[],
  shownDocuments: [] as FakeTextDocument[],
  settings: {} as Record<string, unknown>,
  settingsSection: undefined as string | undefined,
};

/** Forget everything recorded and close the active editor. */
export function resetFakeVscode(): void {
  recorded.commands.clear();
  recorded.contentProviders.clear();
  recorded.quickPicks = [];
  recorded.statusItems = [];
  recorded.errors = [];
  recorded.infos = [];
  recorded.shownDocuments = [];
  recorded.settings = {};
  recorded.settingsSection = undefined;
  window.activeTextEditor = undefined;
}

export const window = {
  activeTextEditor: undefined as FakeTextEditor | undefined,
  createQuickPick<T extends { label: string }>(): FakeQuickPick<T> {
    const picker = new FakeQuickPick<T>();
    recorded.quickPicks.push(picker);
    return picker;
  },
  createStatusBarItem(id: string, alignment?: StatusBarAlignment, priority?: number) {
    const item: Record<string, any> = {
      id,
      alignment,
      priority,
      visible: false,
      text: '',
      show() {
        item.visible = true;
      },
      hide() {
        item.visible = false;
      },
      dispose() {
        item.visible = false;
      },
    };
    recorded.statusItems.push(item);
    return item;
  },
  async showErrorMessage(message: string) {
    recorded.errors.push(message);
    return undefined;
  },
  async showInformationMessage(message: string) {
    recorded.infos.push(message);
    return undefined;
  },
  async showTextDocument(document: FakeTextDocument) {
    recorded.shownDocuments.push(document);
    return new FakeTextEditor(document, [new Selection(new Position(0, 0), new Position(0, 0))]);
  },
};

export const workspace = {
  getConfiguration(section: string) {
    recorded.settingsSection = section;
    return { get: <T>(key: string): T | undefined => recorded.settings[key] as T | undefined };
  },
  registerTextDocumentContentProvider(scheme: string, provider: { provideTextDocumentContent(uri: Uri): unknown }) {
    recorded.contentProviders.set(scheme, provider);
    return new Disposable(() => recorded.contentProviders.delete(scheme));
  },
  onDidCloseTextDocument: new EventEmitter<FakeTextDocument>().event,
  /** Opens a virtual document the way VS Code does: by asking its scheme's content provider. */
  async openTextDocument(uri: Uri) {
    const provider = recorded.contentProviders.get(uri.scheme);
    if (!provider) throw new Error(`no content provider for ${uri.scheme}`);
    const text = String(await provider.provideTextDocumentContent(uri));
    return new FakeTextDocument(uri, uri.path.endsWith('.md') ? 'markdown' : 'plaintext', text);
  },
};

export const commands = {
  registerCommand(id: string, run: (...args: any[]) => unknown) {
    if (recorded.commands.has(id)) throw new Error(`command ${id} already registered`);
    recorded.commands.set(id, run);
    return new Disposable(() => recorded.commands.delete(id));
  },
};

// Glob support for the only shapes the selector uses: `**/*.suffix`.
function globMatches(pattern: string, path: string): boolean {
  const suffix = /^\*\*\/\*(.+)$/.exec(pattern);
  return suffix ? path.endsWith(suffix[1]!) : pattern === path;
}

export const languages = {
  match(selector: Array<{ scheme?: string; language?: string; pattern?: string }>, document: FakeTextDocument): number {
    const hit = selector.some(
      (filter) =>
        (filter.scheme === undefined || filter.scheme === document.uri.scheme) &&
        (filter.language === undefined || filter.language === document.languageId) &&
        (filter.pattern === undefined || globMatches(filter.pattern, document.uri.path)),
    );
    return hit ? 10 : 0;
  },
};
