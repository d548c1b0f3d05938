/**
 * `JSON.stringify` with every `<` written as `\u003c`, so serialised session data can never
 * spell a closing tag; parsing the result gives back the original value.
 */
export function stringifyTagSafeJson(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (cause) {
    throw new TypeError('session-reference data is not JSON-serializable', { cause });
  }
  if (typeof json !== 'string') throw new TypeError('session-reference data is not JSON-serializable');
  // `<` only ever appears inside JSON strings, where `\u003c` is an equivalent escape.
  return json.replace(/</g, '\\u003c');
}
