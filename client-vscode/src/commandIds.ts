/** The commands the extension contributes (package.json `contributes.commands` lists the same ids). */
export const ExtensionCommands = {
  insertReference: 'dshSessions.insertReference',
  previewPrepared: 'dshSessions.previewPrepared',
  openReferencedSession: 'dshSessions.openReferencedSession',
} as const;
