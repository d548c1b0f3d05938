/**
 * Position encodings (LSP 3.17 `general.positionEncodings`): the features count characters in UTF-16 code
 * units, as vscode-languageserver-textdocument does; a client that counts UTF-8 bytes gets every position
 * converted here, where positions cross the wire, and nowhere else:
 *
 * - request params in (completion, hover, code action: position, range, the client's diagnostics);
 * - results out (completion edits, hover range, document links, code-action diagnostics and edits);
 * - pushed diagnostics;
 * - `didChange` ranges, before TextDocuments applies them (it counts UTF-16).
 *
 * A position inside a character (a byte inside `会`, a code unit between the halves of a surrogate pair)
 * is taken to that character's start; a character past the end of its line to the line's end (LSP).
 */
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  RequestType,
  type ClientCapabilities,
  type Connection,
  type DidChangeTextDocumentParams,
  type NotificationHandler,
  type Position,
  type PublishDiagnosticsParams,
  type Range,
  type TextDocuments,
} from 'vscode-languageserver/node';
import { CODE_ACTION_PARAMS, COMPLETION_PARAMS, DID_CHANGE_PARAMS, DOCUMENT_LINK_PARAMS, HOVER_PARAMS, paramsProblem, type ParamsShape } from './params';

export type PositionEncoding = 'utf-8' | 'utf-16';

/**
 * The encoding for a client: the first of its `general.positionEncodings` the server speaks (the list is in
 * the client's order of preference), else UTF-16, which every client must accept.
 */
export function negotiatePositionEncoding(capabilities: ClientCapabilities | undefined): PositionEncoding {
  const offered = capabilities?.general?.positionEncodings;
  if (!Array.isArray(offered)) return 'utf-16';
  for (const kind of offered) if (kind === 'utf-8' || kind === 'utf-16') return kind;
  return 'utf-16';
}

const isLineBreak = (code: number): boolean => code === 10 || code === 13;

function utf8Length(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  // A lone surrogate goes out as U+FFFD (3 bytes), like every other BMP character from here.
  return codePoint < 0x10000 ? 3 : 4;
}

/**
 * Converts positions of one text between UTF-16 and UTF-8 columns. Conversions in document order cost a
 * walk over the text once in all (each goes on from the last one on the same line).
 */
export class ColumnConverter {
  private readonly text: string;
  /** The last point reached: line, UTF-16 offset in the text, UTF-8 column on that line. */
  private mark = { line: -1, offset: 0, bytes: 0 };

  constructor(private readonly document: TextDocument) {
    this.text = document.getText();
  }

  /** A UTF-8 position as UTF-16. */
  toUtf16(position: Position): Position {
    const start = this.start(position.line);
    if (start === undefined) return position;
    let { offset, bytes } = start;
    const text = this.text;
    while (offset < text.length && !isLineBreak(text.charCodeAt(offset))) {
      const codePoint = text.codePointAt(offset)!;
      const size = utf8Length(codePoint);
      if (bytes + size > position.character) break;
      bytes += size;
      offset += codePoint > 0xffff ? 2 : 1;
    }
    this.mark = { line: position.line, offset, bytes };
    return { line: position.line, character: offset - this.lineStart(position.line) };
  }

  /** A UTF-16 position as UTF-8. */
  toUtf8(position: Position): Position {
    const start = this.start(position.line);
    if (start === undefined) return position;
    const lineStart = this.lineStart(position.line);
    let { offset, bytes } = start;
    const text = this.text;
    const target = lineStart + position.character;
    while (offset < text.length && !isLineBreak(text.charCodeAt(offset))) {
      const codePoint = text.codePointAt(offset)!;
      const width = codePoint > 0xffff ? 2 : 1;
      if (offset + width > target) break;
      bytes += utf8Length(codePoint);
      offset += width;
    }
    this.mark = { line: position.line, offset, bytes };
    return { line: position.line, character: bytes };
  }

  private lineStart(line: number): number {
    return this.document.offsetAt({ line, character: 0 });
  }

  /** Where to walk from for `line` (the line's start, or the last point if it is on the line); undefined past the end. */
  private start(line: number): { offset: number; bytes: number } | undefined {
    if (!Number.isInteger(line) || line < 0 || line >= this.document.lineCount) return undefined;
    if (this.mark.line === line) return this.mark;
    return { offset: this.lineStart(line), bytes: 0 };
  }
}

/** Both directions over one text; a conversion before the last one of its direction starts from its line again. */
class Converter {
  private inColumns: ColumnConverter;
  private outColumns: ColumnConverter;
  private lastIn?: Position;
  private lastOut?: Position;

  constructor(private readonly document: TextDocument) {
    this.inColumns = new ColumnConverter(document);
    this.outColumns = new ColumnConverter(document);
  }

  /** Client (UTF-8) to server (UTF-16). */
  in(position: Position): Position {
    if (before(position, this.lastIn)) this.inColumns = new ColumnConverter(this.document);
    this.lastIn = position;
    return this.inColumns.toUtf16(position);
  }

  /** Server (UTF-16) to client (UTF-8). */
  out(position: Position): Position {
    if (before(position, this.lastOut)) this.outColumns = new ColumnConverter(this.document);
    this.lastOut = position;
    return this.outColumns.toUtf8(position);
  }

  inRange(range: Range): Range {
    return { start: this.in(range.start), end: this.in(range.end) };
  }

  outRange(range: Range): Range {
    return { start: this.out(range.start), end: this.out(range.end) };
  }
}

const before = (position: Position, last: Position | undefined): boolean =>
  last !== undefined && (position.line < last.line || (position.line === last.line && position.character < last.character));

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isRange = (value: unknown): value is Range => isObject(value) && isObject(value.start) && isObject(value.end);

/** A document as the request saw it: the live one while unchanged, else a copy of the text it had. */
interface Snapshot {
  document(): TextDocument;
}

function snapshotOf(documents: TextDocuments<TextDocument>, uri: unknown): Snapshot | undefined {
  if (typeof uri !== 'string') return undefined;
  const live = documents.get(uri);
  if (live === undefined) return undefined;
  const { version, languageId } = live;
  const text = live.getText();
  return {
    document: () => (live.version === version && documents.get(uri) === live ? live : TextDocument.create(uri, languageId, version, text)),
  };
}

/** The methods whose params and results carry positions, and how to convert them. */
const REQUESTS: Record<string, { shape: ParamsShape<unknown>; params(params: Json, convert: Converter): void; result(result: unknown, convert: Converter, uri: string): void }> = {
  'textDocument/completion': {
    shape: COMPLETION_PARAMS,
    params: (params, convert) => (params.position = convert.in(params.position as Position)),
    result: (result, convert) => {
      const items = Array.isArray(result) ? result : isObject(result) && Array.isArray(result.items) ? result.items : [];
      for (const item of items as Json[]) {
        const edit = item.textEdit;
        if (!isObject(edit)) continue;
        if (isRange(edit.range)) edit.range = convert.outRange(edit.range);
        if (isRange(edit.insert)) edit.insert = convert.outRange(edit.insert);
        if (isRange(edit.replace)) edit.replace = convert.outRange(edit.replace);
      }
    },
  },
  'textDocument/hover': {
    shape: HOVER_PARAMS,
    params: (params, convert) => (params.position = convert.in(params.position as Position)),
    result: (result, convert) => {
      if (isObject(result) && isRange(result.range)) result.range = convert.outRange(result.range);
    },
  },
  'textDocument/documentLink': {
    shape: DOCUMENT_LINK_PARAMS,
    params: () => undefined,
    result: (result, convert) => {
      if (Array.isArray(result)) for (const link of result as Json[]) if (isRange(link.range)) link.range = convert.outRange(link.range);
    },
  },
  'textDocument/codeAction': {
    shape: CODE_ACTION_PARAMS,
    params: (params, convert) => {
      params.range = convert.inRange(params.range as Range);
      const context = params.context as { diagnostics: Json[] };
      context.diagnostics = context.diagnostics.map((diagnostic) => ({ ...diagnostic, range: convert.inRange(diagnostic.range as Range) }));
    },
    result: (result, convert, uri) => {
      if (!Array.isArray(result)) return;
      for (const action of result as Json[]) {
        if (Array.isArray(action.diagnostics)) {
          action.diagnostics = (action.diagnostics as Json[]).map((diagnostic) => ({ ...diagnostic, range: convert.outRange(diagnostic.range as Range) }));
        }
        const changes = isObject(action.edit) && isObject(action.edit.changes) ? action.edit.changes : undefined;
        // The features only edit the document the action was asked for.
        const edits = changes?.[uri];
        if (Array.isArray(edits)) changes![uri] = (edits as Json[]).map((edit) => ({ ...edit, range: convert.outRange(edit.range as Range) }));
      }
    },
  },
};

/** A connection whose positions are in the negotiated encoding on the wire and UTF-16 for the features. */
export interface EncodedConnection extends Connection {
  /** Set from `initialize` (UTF-16 until then). */
  positionEncoding: PositionEncoding;
}

/**
 * `connection` with every position crossing it converted (see the module comment): register the
 * features' requests, the document sync and the diagnostics through the returned connection.
 */
export function withPositionEncoding(connection: Connection, documents: TextDocuments<TextDocument>): EncodedConnection {
  const encoded = Object.create(connection) as EncodedConnection;
  encoded.positionEncoding = 'utf-16';
  const utf8 = (): boolean => encoded.positionEncoding === 'utf-8';

  encoded.onRequest = ((type: unknown, handler: (params: unknown, ...rest: unknown[]) => unknown) => {
    const method = typeof type === 'string' ? type : type instanceof RequestType || isObject(type) ? (type as { method: string }).method : undefined;
    const conversion = method === undefined ? undefined : REQUESTS[method];
    if (conversion === undefined || typeof handler !== 'function') return (connection.onRequest as (...args: unknown[]) => unknown)(type, handler);
    return (connection.onRequest as (...args: unknown[]) => unknown)(type, async (params: unknown, ...rest: unknown[]) => {
      const uri = isObject(params) && isObject(params.textDocument) ? params.textDocument.uri : undefined;
      const snapshot = utf8() ? snapshotOf(documents, uri) : undefined;
      // Params are checked by the handler (params.ts): only well-formed ones are converted (on a copy).
      let converted = params;
      if (snapshot !== undefined && isObject(params) && paramsProblem(params, conversion.shape) === undefined) {
        const copy = structuredClone(params);
        conversion.params(copy, new Converter(snapshot.document()));
        converted = copy;
      }
      const result = await handler(converted, ...rest);
      if (snapshot !== undefined && result !== null && result !== undefined) conversion.result(result, new Converter(snapshot.document()), uri as string);
      return result;
    });
  }) as Connection['onRequest'];

  encoded.sendDiagnostics = (params: PublishDiagnosticsParams) => {
    const document = utf8() ? documents.get(params.uri) : undefined;
    if (document === undefined) return connection.sendDiagnostics(params);
    const convert = new Converter(document);
    return connection.sendDiagnostics({ ...params, diagnostics: params.diagnostics.map((diagnostic) => ({ ...diagnostic, range: convert.outRange(diagnostic.range) })) });
  };

  encoded.onDidChangeTextDocument = (handler: NotificationHandler<DidChangeTextDocumentParams>) =>
    connection.onDidChangeTextDocument((params) => {
      const document = utf8() && isObject(params) && isObject(params.textDocument) ? documents.get(params.textDocument.uri as string) : undefined;
      // Malformed params go on unconverted, for the check (params.ts) to refuse.
      if (document === undefined || paramsProblem(params, DID_CHANGE_PARAMS) !== undefined) return handler(params);
      return handler({ ...params, contentChanges: utf16Changes(document, params.contentChanges) });
    });

  return encoded;
}

/**
 * UTF-8 ranged changes as UTF-16 ones: each range is relative to the text after the changes before it,
 * so the text is followed change by change (only when there are several).
 */
function utf16Changes(document: TextDocument, changes: DidChangeTextDocumentParams['contentChanges']): DidChangeTextDocumentParams['contentChanges'] {
  let current = document;
  return changes.map((change, index) => {
    if (!('range' in change) || change.range === undefined) {
      current = TextDocument.create(current.uri, current.languageId, current.version, change.text);
      return change;
    }
    const ranged = change as { range: Range; text: string };
    const converted = new Converter(current).inRange(ranged.range);
    if (index < changes.length - 1) current = TextDocument.update(TextDocument.create(current.uri, current.languageId, current.version, current.getText()), [{ range: converted, text: ranged.text }], current.version);
    return { range: converted, text: ranged.text };
  });
}
