/**
 * The server's version, reported by `--version` and in `initialize`. A constant, not read from a
 * package.json at run time: bundled into the VS Code extension, the file next to the server is the
 * extension's manifest. version.test.ts keeps it equal to server/package.json.
 */
export const SERVER_VERSION = '0.1.0';
