/** What diagnostics predict of `prepare`, for the tests that hold the two in agreement. */
import type { SessionReferenceErrorCode } from '@dsh-session-ls/shared';
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver-types';

/** The order in which `prepare` raises its errors (lsp-contract.md, Diagnostics): the first present is the one dsh reports. */
export const DSH_ERROR_ORDER: readonly SessionReferenceErrorCode[] = [
  'SESSION_REFERENCE_INVALID_REFERENCE',
  'SESSION_REFERENCE_SELF_REFERENCE',
  'SESSION_REFERENCE_TOO_MANY',
  'SESSION_REFERENCE_READ_FAILED',
  'SESSION_REFERENCE_BUDGET_EXCEEDED',
];

/** The code `prepare` fails with for these diagnostics: the first error in dsh's order, or undefined when none is an error. */
export function predictedPrepareError(diagnostics: readonly Diagnostic[]): SessionReferenceErrorCode | undefined {
  const codes = new Set(diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error).map((d) => d.code));
  return DSH_ERROR_ORDER.find((code) => codes.has(code));
}
