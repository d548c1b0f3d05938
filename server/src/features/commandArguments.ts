import {
  SESSION_REFERENCE_CONFIG_KEYS,
  SessionReferenceError,
  resolveSessionReferenceConfig,
  type SessionCommandArgument,
  type SessionCommandDocument,
  type SessionCommandName,
  type SessionCommandOptions,
  type SessionReferenceConfig,
} from '@dsh-session-ls/shared';
import type { TargetRequest } from './services';

/** Every field name of `A`, across the forms of a union. */
type FieldOf<A> = A extends unknown ? keyof A & string : never;

/** The fields of `A` (any form) that shared/ declares as strings. */
type StringFieldOf<A> = A extends unknown
  ? { [K in keyof A & string]-?: [NonNullable<A[K]>] extends [never] ? never : NonNullable<A[K]> extends string ? K : never }[keyof A & string]
  : never;

declare const argumentShape: unique symbol;

/**
 * A command's one argument object as received: an object whose fields are still unchecked. Only the
 * fields `SessionCommandMap` declares for the command (`A`, any of its forms) can be read, and the
 * accessors below take only fields of the declared type, so a change to the map fails to compile here.
 */
export type CommandArgument<A> = { readonly [K in FieldOf<A>]?: unknown } & { readonly [argumentShape]?: A };

function invalidReference(message: string): SessionReferenceError {
  return new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', message);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The one argument object of a command: `arguments` must hold exactly one object, or one string of
 * JSON for such an object (clients like YouCompleteMe send strings); anything else is INVALID_REFERENCE.
 */
export function commandArgument<C extends SessionCommandName>(command: C, args: unknown): CommandArgument<SessionCommandArgument<C>> {
  if (!Array.isArray(args) || args.length !== 1) {
    throw invalidReference(`${command} takes exactly one argument object`);
  }
  let value: unknown = args[0];
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw invalidReference(`${command}: the string argument is not JSON`);
    }
  }
  if (!isPlainObject(value)) throw invalidReference(`${command} takes exactly one argument object`);
  return value;
}

/** An optional string field (`null` = absent); anything else is INVALID_REFERENCE. */
export function optionalString<A>(argument: CommandArgument<A>, field: StringFieldOf<A>): string | undefined {
  const value = (argument as Record<string, unknown>)[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidReference(`${field} must be a string`);
  return value;
}

/** A required string field; anything else is INVALID_REFERENCE. */
export function requiredString<A>(argument: CommandArgument<A>, field: StringFieldOf<A>): string {
  const value = (argument as Record<string, unknown>)[field];
  if (typeof value !== 'string') throw invalidReference(`${field} must be a string`);
  return value;
}

/** The `target` field: an object whose `sessionId` and `cwd` are each a string, `null` or absent. */
export function targetRequest(argument: CommandArgument<SessionCommandOptions>): TargetRequest | undefined {
  const value = argument.target;
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) throw invalidReference('target must be an object');
  const request: TargetRequest = {};
  for (const field of ['sessionId', 'cwd'] as const) {
    const fieldValue = value[field];
    if (fieldValue === undefined) continue;
    if (fieldValue !== null && typeof fieldValue !== 'string') throw invalidReference(`target.${field} must be a string or null`);
    request[field] = fieldValue;
  }
  return request;
}

/** The `textDocument.uri` field, if the argument names a document. */
export function textDocumentUri(argument: CommandArgument<{ textDocument?: SessionCommandDocument | null }>): string | undefined {
  const value = argument.textDocument;
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value) || typeof value.uri !== 'string') throw invalidReference('textDocument must be { uri: string }');
  return value.uri;
}

/**
 * The per-call `config` field, validated as dsh validates a config (INVALID_CONFIG); only the fields it
 * sets are returned, so the others keep their settings.
 */
export function configOverride(argument: CommandArgument<SessionCommandOptions>): Partial<SessionReferenceConfig> | undefined {
  const value = argument.config;
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_CONFIG', 'session-reference: config must be an object');
  }
  const resolved = resolveSessionReferenceConfig(value as Partial<SessionReferenceConfig>);
  const override: Partial<SessionReferenceConfig> = {};
  for (const key of SESSION_REFERENCE_CONFIG_KEYS) {
    if (value[key] !== undefined) override[key] = resolved[key];
  }
  return override;
}
