/**
 * Where an answer's rows write their JSON (the wire writer's reused UTF-8 buffer, `wiring/jsonBytes.ts`):
 * a 100,000-row answer made as objects and strings and then serialized left ~1.7 KB of short-lived
 * garbage per row. A row writes its pieces as they are (punctuation, text it knows needs no escape, or
 * text it escaped), so that together they are exactly the bytes `JSON.stringify` gives for the row.
 */
export interface JsonSink {
  /** One byte (ASCII punctuation). */
  byte(value: number): void;
  /** `text` as it is, UTF-8, no escaping: JSON punctuation, or text {@link isJsonPlain} says is safe. */
  raw(text: string): void;
  /** Unpadded base64url of the UTF-8 bytes of `JSON.stringify(text)`: a session URI's payload, no quotes. */
  base64UrlOfJsonString(text: string): void;
}

/** An element of an answer that writes its own JSON: exactly the bytes of `JSON.stringify(element)`. */
export interface JsonSinkSource {
  writeJson(out: JsonSink): void;
}

export function isJsonSinkSource(item: unknown): item is JsonSinkSource {
  return typeof item === 'object' && item !== null && typeof (item as { writeJson?: unknown }).writeJson === 'function';
}

/** What `JSON.stringify` escapes in a string, and every surrogate (a lone one is escaped; a pair is not, but is rare in titles). */
const NEEDS_JSON_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Whether `JSON.stringify(text)` is `text` in quotes. */
export function isJsonPlain(text: string): boolean {
  return !NEEDS_JSON_ESCAPE.test(text);
}
