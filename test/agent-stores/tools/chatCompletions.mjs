// The OpenAI Chat Completions API (JSON and streaming SSE with tool_calls), as modelServer.mjs
// serves it to CLIs that speak it (Qwen Code). Replies are chosen by keywords in the last user text:
//   TOOL → one shell call (the first offered function whose name says shell or command), then text;
//   READ → one file read (the offered function whose name says read_file) of `notes.txt` in the
//          cwd the system prompt names, then text;
//   BIG  → report a large prompt token count (pushes the CLI over its compression threshold);
//   anything else → a short text reply that quotes the prompt.
// A request whose last user message asks for a summary of the conversation (compression) gets a
// summary in the shape the CLIs ask for; a request for a session title gets a short title.

/** The text of an OpenAI message content (a string, or parts with `text`). */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('\n');
}

/** The user's own words: the text parts that are not injected context (`<system-reminder>` and the like). */
function ownWords(content) {
  if (typeof content === 'string') return content.trim();
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => typeof part?.text === 'string' && !part.text.trimStart().startsWith('<'))
    .map((part) => part.text)
    .join('\n')
    .trim();
}

function findTool(tools, pattern) {
  return tools.find((tool) => tool?.type === 'function' && pattern.test(tool.function?.name ?? ''))?.function;
}

/** Arguments for a tool call, fitted to the parameter names the tool declares. */
function argumentsFor(tool, values) {
  const props = tool.parameters?.properties ?? {};
  const args = {};
  for (const [names, value] of values) {
    const name = names.find((candidate) => candidate in props) ?? names[0];
    args[name] = value;
  }
  return JSON.stringify(args);
}

/** The working directory a CLI's context names (Qwen Code: "I'm currently working in the directory: …"), if any. */
function cwdOf(messages) {
  const everything = messages.map((message) => contentText(message.content)).join('\n');
  return /working in the directory: (\/.*)$/m.exec(everything)?.[1]?.trim();
}

let counter = 0;

/** What to answer a request with: a text, or a tool call; `big` for a large token count. */
function chatPlan(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages[messages.length - 1] ?? {};
  const lastUser = [...messages].reverse().find((message) => message?.role === 'user') ?? {};
  const said = ownWords(lastUser.content) || contentText(lastUser.content);
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const big = /\bBIG\b/.test(said);
  if (last.role === 'tool') return { text: 'The tool ran; its output was: fixture-tool-output.', big };
  const asked = contentText(last.content) + '\n' + contentText(messages[0]?.content);
  if (/summarizes a conversation|<state_snapshot>/.test(asked)) {
    return {
      text:
        '<analysis>The user generated fixture sessions.</analysis>\n<state_snapshot>\n<overall_goal>Generate fixture sessions: a tool call, a file read, a rename and a compression.</overall_goal>\n' +
        '<key_knowledge>The user wrote about 日本語のテキスト (Japanese text) and 中文摘要.</key_knowledge>\n</state_snapshot>',
    };
  }
  if (tools.length === 0 && /\btitle\b/i.test(asked)) return { text: JSON.stringify({ title: 'Fixture title' }) };
  if (/\bTOOL\b/.test(said)) {
    const shell = findTool(tools, /shell|command|bash/i);
    if (shell) return { call: { name: shell.name, arguments: argumentsFor(shell, [[['command', 'cmd'], 'echo fixture-tool-output']]) }, big };
  }
  if (/\bREAD\b/.test(said)) {
    const read = findTool(tools, /read_file|^read$/i);
    if (read) {
      const file = `${cwdOf(messages) ?? process.cwd()}/notes.txt`;
      return { call: { name: read.name, arguments: argumentsFor(read, [[['absolute_path', 'file_path', 'path', 'filePath'], file]]) }, big };
    }
  }
  const firstLine = said.split('\n').filter((line) => line.trim() !== '')[0] ?? 'hello';
  return { text: `Reply ${++counter}: you said "${firstLine.slice(0, 80)}".`, big };
}

function chunk(res, id, model, delta, finish) {
  res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish ?? null }] })}\n\n`);
}

/** Answers one /chat/completions request. */
export function chatCompletions(req, res, body) {
  const plan = chatPlan(body);
  const id = `chatcmpl-fixture-${++counter}`;
  const model = body.model ?? 'qwen-fixture';
  const promptTokens = plan.big ? 2_000_000 : 1100;
  const usage = { prompt_tokens: promptTokens, completion_tokens: 100, total_tokens: promptTokens + 100 };
  const toolCall = plan.call ? { id: `call_fixture_${counter}`, type: 'function', function: plan.call } : undefined;
  const finish = toolCall ? 'tool_calls' : 'stop';
  if (!body.stream) {
    const message = toolCall ? { role: 'assistant', content: null, tool_calls: [toolCall] } : { role: 'assistant', content: plan.text };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  chunk(res, id, model, { role: 'assistant', content: '' });
  if (toolCall) {
    chunk(res, id, model, { tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } }] });
    chunk(res, id, model, { tool_calls: [{ index: 0, function: { arguments: toolCall.function.arguments } }] });
  } else {
    chunk(res, id, model, { content: plan.text });
  }
  chunk(res, id, model, {}, finish);
  res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [], usage })}\n\n`);
  res.write('data: [DONE]\n\n');
  res.end();
}
