import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVER_VERSION } from './version';

describe('SERVER_VERSION', () => {
  it('is the version of server/package.json', () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { name: string; version: string };
    expect(manifest.name).toBe('dsh-session-ls');
    expect(SERVER_VERSION).toBe(manifest.version);
  });
});
