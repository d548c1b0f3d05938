import { DshSessionClient, SessionReferenceError, formatSessionReferenceMention } from 'dsh-session-ls/client';

// Starts the package's own server (nothing needed on PATH); unset, the root is dsh's default.
const client = await DshSessionClient.start({ settings: { sessionsRoot: process.env.DSH_SESSIONS_ROOT } });
try {
  const [session] = await client.candidates('cache'); // waits for the first index
  console.log(session.mention);
  const prepared = await client.prepare(`What did we decide in ${session.mention}?`);
  console.log(prepared.additionalContext?.source.references.map((reference) => reference.label));
  const list = await client.completeAt('See @'); // completion right after typing `@`
  console.log(list.items.filter((item) => item.data?.kind === 'dsh-session').map((item) => item.label));

  // What an editor shows for a message: diagnostics (dsh would refuse it), a hover on a mention.
  const gone = formatSessionReferenceMention({ sessionId: 'gone', label: 'Old work' });
  const message = `Compare ${session.mention} with ${gone}`;
  for (const diagnostic of await client.diagnostics(message)) console.log(diagnostic.code);
  const hover = await client.hover(message, message.indexOf('@') + 1);
  console.log(hover?.contents.value.split('\n')[0]);
  console.log((await client.transcript(session.sessionId)).split('\n')[0]); // the session as Markdown

  await client.prepare('x', { config: { maxReferences: 4 } }).catch((error) => {
    if (error instanceof SessionReferenceError) console.log(error.code); // SESSION_REFERENCE_INVALID_CONFIG
    else throw error;
  });
} finally {
  await client.shutdown(); // shutdown, exit, and wait for the process
}
