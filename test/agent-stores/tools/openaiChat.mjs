// The OpenAI Chat Completions route of modelServer.mjs (streaming SSE and JSON, with tool_calls),
// enough for opencode (through @ai-sdk/openai-compatible) to run a turn. Replies, by the last
// user text:
//   TOOL  → one `bash` tool call (echo fixture-tool-output), then text once its result comes back;
//   READ <path> → one `read` tool call of that file, then text;
//   a request to generate a title → a fixed title naming the first words of the prompt;
//   a request to summarize the conversation (compaction) → a summary with CJK text;
//   anything else → a short text reply that quotes the prompt.

let counter = 0;

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('\n');
}

/** What to answer to one Chat Completions request body. */
function chatPlan(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages[messages.length - 1] ?? {};
  const system = messages.filter((m) => m?.role === 'system').map((m) => textOf(m.content)).join('\n');
  const lastUser = [...messages].reverse().find((m) => m?.role === 'user') ?? {};
  const userText = textOf(lastUser.content);
  const tools = Array.isArray(body.tools) ? body.tools.map((t) => t?.function?.name) : [];
  if (last.role === 'tool') return { text: `The tool ran; its output began: ${textOf(last.content).slice(0, 40)}` };
  if (/title generator|generate a title|thread title/i.test(system)) {
    const words = userText.replace(/<[^>]*>/g, ' ').split(/\s+/).filter(Boolean).slice(0, 4).join(' ');
    return { text: `Fixture title: ${words}`.slice(0, 60) };
  }
  if (/summar/i.test(userText) && /conversation/i.test(userText) && !/\b(TOOL|READ)\b/.test(userText)) {
    return { text: 'Summary: the user asked about fixtures, 日本語のテキストと圧縮. Continue from here.' };
  }
  if (/\bTOOL\b/.test(userText) && tools.includes('bash')) {
    return { call: { name: 'bash', arguments: JSON.stringify({ command: 'echo fixture-tool-output', description: 'Print a marker' }) } };
  }
  // opencode quotes a message argument that holds a space.
  const read = /\bREAD (?:"([^"]+)"|(\S+))/.exec(userText);
  if (read && tools.includes('read')) return { call: { name: 'read', arguments: JSON.stringify({ filePath: read[1] ?? read[2] }) } };
  const firstLine = userText.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('<'))[0] ?? 'hello';
  return { text: `Reply ${++counter}: you said "${firstLine.slice(0, 80)}".` };
}

function chunk(res, id, model, delta, finishReason, usage) {
  const data = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
  if (usage) data.usage = usage;
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

/** Answers one POST …/chat/completions. */
export function chatCompletions(req, res, body) {
  const plan = chatPlan(body);
  const id = `chatcmpl-fixture-${++counter}`;
  const model = body.model ?? 'gpt-fixture';
  const usage = { prompt_tokens: 1100, completion_tokens: 100, total_tokens: 1200 };
  const toolCall = plan.call && { index: 0, id: `call_fixture_${counter}`, type: 'function', function: plan.call };
  const finish = plan.call ? 'tool_calls' : 'stop';
  if (!body.stream) {
    const message = plan.call ? { role: 'assistant', content: null, tool_calls: [toolCall] } : { role: 'assistant', content: plan.text };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (plan.call) {
    chunk(res, id, model, { role: 'assistant', content: null, tool_calls: [toolCall] }, null);
  } else {
    chunk(res, id, model, { role: 'assistant', content: '' }, null);
    chunk(res, id, model, { content: plan.text }, null);
  }
  chunk(res, id, model, {}, finish, usage);
  res.write('data: [DONE]\n\n');
  res.end();
}
