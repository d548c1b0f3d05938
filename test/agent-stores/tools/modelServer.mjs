// A scripted model server on 127.0.0.1 for generating Claude Code, Codex and Gemini CLI fixture
// stores offline. It speaks just enough of the Anthropic Messages API (JSON and streaming SSE), the
// OpenAI Responses API (streaming SSE), the Gemini API (generateContent, streamGenerateContent
// with alt=sse, countTokens), and the OpenAI Chat Completions API (chatCompletions.mjs, for Qwen
// Code; openaiChat.mjs under /opencode/v1, for opencode) for the real CLIs to run a turn. Replies
// are chosen by keywords in
// the last user text:
//   TOOL  → one shell tool call (Claude: Bash; Codex: the first function tool it offers; Gemini:
//           run_shell_command, or read_file with READ), then text;
//   STALL → stream half a reply and hang (the generator kills the CLI: an interrupted turn);
//   BIG   → report a large token usage (pushes Codex and Gemini CLI over their auto-compact limits);
//   anything else → a short text reply that quotes the prompt.
// A request that asks for a summary (compaction) gets a summary text. Every request is appended to
// the log file given as the second argument (one JSON line each), to see what the CLIs send.
// Usage: node modelServer.mjs <port-file> <request-log>
import { createServer } from 'node:http';
import { appendFileSync, writeFileSync } from 'node:fs';
import { chatCompletions } from './chatCompletions.mjs';
import { chatCompletions as opencodeChat } from './openaiChat.mjs';

const [portFile, requestLog] = process.argv.slice(2);
let counter = 0;
const stalled = new Set();
// After POST /fixture/summaries-off, session titles come back empty (so listing them titles nothing).
let summariesOff = false;

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => (typeof block?.text === 'string' ? block.text : typeof block?.content === 'string' ? block.content : ''))
    .join('\n');
}

/** The user's own words: text blocks other than the CLIs' injected `<system-reminder>`-style context. */
function userText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((block) => typeof block?.text === 'string' && !block.text.trimStart().startsWith('<'))
    .map((block) => block.text)
    .join('\n');
}

function sse(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

// ---- Anthropic Messages API --------------------------------------------------------------------

function anthropicPlan(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages[messages.length - 1] ?? {};
  const lastBlocks = Array.isArray(last.content) ? last.content : [];
  const lastText = userText(last.content) || textOf(last.content);
  const system = textOf(body.system);
  const hasTools = Array.isArray(body.tools) && body.tools.some((t) => t?.name === 'Bash');
  if (lastBlocks.some((b) => b?.type === 'tool_result')) {
    return { text: 'The tool ran; its output was: fixture-tool-output.' };
  }
  if (/summar/i.test(lastText) && /conversation/i.test(lastText + system) && !hasTools) {
    return { text: '<summary>\nThe user and the assistant talked about fixture generation: a rename, a tool call and a compaction.\n</summary>' };
  }
  if (/\bTOOL\b/.test(lastText) && hasTools) {
    return { tool: { name: 'Bash', input: { command: 'echo fixture-tool-output', description: 'Print a marker' } } };
  }
  if (/\bSTALL\b/.test(lastText) && hasTools) return { text: 'I will start answering and then', stall: true };
  const firstLine = lastText.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('<'))[0] ?? 'hello';
  return { text: `Reply ${++counter}: you said "${firstLine.slice(0, 80)}".` };
}

function anthropic(req, res, body) {
  const plan = anthropicPlan(body);
  const id = `msg_fixture_${++counter}`;
  const model = body.model ?? 'claude-fixture';
  const usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const content = plan.tool
    ? [{ type: 'tool_use', id: `toolu_fixture_${counter}`, name: plan.tool.name, input: plan.tool.input }]
    : [{ type: 'text', text: plan.text }];
  const stopReason = plan.tool ? 'tool_use' : 'end_turn';
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(res, 'message_start', {
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  });
  if (plan.tool) {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: content[0].id, name: plan.tool.name, input: {} } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(plan.tool.input) } });
  } else {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: plan.text } });
  }
  if (plan.stall) {
    stalled.add(res); // never finished: the client is killed mid-turn
    return;
  }
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

// ---- OpenAI Responses API ----------------------------------------------------------------------

function responsesPlan(body) {
  const input = Array.isArray(body.input) ? body.input : [];
  const last = input[input.length - 1] ?? {};
  const lastUser = [...input].reverse().find((item) => item?.type === 'message' && item.role === 'user') ?? {};
  const lastText = userText(lastUser.content) || textOf(lastUser.content);
  const instructions = typeof body.instructions === 'string' ? body.instructions : '';
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const shell = tools.find((t) => t?.type === 'function' && /shell|exec_command/.test(t.name ?? ''));
  const big = /\bBIG\b/.test(lastText);
  if (last.type === 'function_call_output' || last.type === 'custom_tool_call_output') {
    return { text: 'The tool ran; its output was: fixture-tool-output.', big };
  }
  if (/summar|checkpoint|handoff/i.test(lastText) && /context|conversation/i.test(lastText + instructions) && !/\b(TOOL|STALL|BIG)\b/.test(lastText)) {
    return { text: 'Summary for the next turn: the user asked for fixture turns, a tool call and a rename.' };
  }
  if (/\bTOOL\b/.test(lastText) && shell) {
    const props = shell.parameters?.properties ?? {};
    const args = 'cmd' in props ? { cmd: 'echo fixture-tool-output' } : { command: ['bash', '-lc', 'echo fixture-tool-output'] };
    return { call: { name: shell.name, arguments: JSON.stringify(args) }, big };
  }
  if (/\bSTALL\b/.test(lastText)) return { text: 'I will start answering and then', stall: true };
  const firstLine = lastText.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('<'))[0] ?? 'hello';
  return { text: `Reply ${++counter}: you said "${firstLine.slice(0, 80)}".`, big };
}

function responses(req, res, body) {
  const plan = responsesPlan(body);
  const id = `resp_fixture_${++counter}`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(res, 'response.created', { type: 'response.created', response: { id } });
  let item;
  if (plan.call) {
    item = { type: 'function_call', id: `fc_fixture_${counter}`, call_id: `call_fixture_${counter}`, name: plan.call.name, arguments: plan.call.arguments };
  } else {
    item = { type: 'message', id: `msg_fixture_${counter}`, role: 'assistant', content: [{ type: 'output_text', text: plan.text, annotations: [] }] };
    sse(res, 'response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, content: [] } });
    sse(res, 'response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: plan.text });
    if (plan.stall) {
      stalled.add(res);
      return;
    }
  }
  sse(res, 'response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
  const total = plan.big ? 30000 : 1200;
  sse(res, 'response.completed', {
    type: 'response.completed',
    response: {
      id,
      usage: {
        input_tokens: total - 100,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 100,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: total,
      },
    },
  });
  res.end();
}

// ---- Gemini API ----------------------------------------------------------------------------------

function geminiTexts(content) {
  const parts = Array.isArray(content?.parts) ? content.parts : [];
  // The CLI's own context (`<session_context>…`) rides in the same turn as the prompt: left out.
  return parts.filter((part) => typeof part?.text === 'string' && part.thought !== true && !part.text.trimStart().startsWith('<session_context>')).map((part) => part.text);
}

function geminiPlan(body) {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  const last = contents[contents.length - 1] ?? {};
  const lastParts = Array.isArray(last.parts) ? last.parts : [];
  const lastText = geminiTexts(last).join('\n');
  const system = typeof body.systemInstruction === 'string' ? body.systemInstruction : geminiTexts(body.systemInstruction).join('\n');
  const declarations = (Array.isArray(body.tools) ? body.tools : []).flatMap((tool) => (Array.isArray(tool?.functionDeclarations) ? tool.functionDeclarations : []));
  const offers = (name) => declarations.some((declaration) => declaration?.name === name);
  const big = /\bBIG\b/.test(lastText);
  // The session title Gemini CLI asks for (its prompt quotes the conversation, snapshots included).
  if (/^Summarize the user's primary intent/.test(lastText)) return { text: summariesOff ? '' : 'Fixture work on the 日本語 parser' };
  // Compression: a state snapshot, then its verification (the same snapshot again).
  if (/state_snapshot/.test(system)) {
    return { text: '<state_snapshot>\n<overall_goal>Fixture turns: a tool call, 日本語のテキスト and a compression.</overall_goal>\n</state_snapshot>' };
  }
  if (typeof body.generationConfig?.responseJsonSchema === 'object' || body.generationConfig?.responseMimeType === 'application/json') {
    // The model router's classifiers and the next-speaker check ask for JSON.
    return { text: JSON.stringify({ reasoning: 'fixture', model_choice: 'flash', complexity_reasoning: 'fixture', complexity_score: 10, next_speaker: 'user' }) };
  }
  if (lastParts.some((part) => part?.functionResponse !== undefined)) return { text: 'The tool ran; its output was: fixture-tool-output.', big };
  if (/\bREAD\b/.test(lastText) && offers('read_file')) return { call: { name: 'read_file', args: { file_path: 'notes.txt' } }, big };
  if (/\bTOOL\b/.test(lastText) && offers('run_shell_command')) {
    return { call: { name: 'run_shell_command', args: { command: 'echo fixture-tool-output', description: 'Print a marker' } }, big };
  }
  if (/\bSTALL\b/.test(lastText)) return { text: 'I will start answering and then', stall: true };
  const firstLine = lastText.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('<'))[0] ?? 'hello';
  return { text: `Reply ${++counter}: you said "${firstLine.slice(0, 80)}".`, big };
}

function geminiResponse(plan, finished) {
  const parts = plan.call ? [{ functionCall: plan.call }] : [{ text: plan.text }];
  const prompt = plan.big ? 900_000 : 1100;
  return {
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(finished ? { finishReason: 'STOP' } : {}) }],
    usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: 100, totalTokenCount: prompt + 100 },
    modelVersion: 'gemini-fixture',
  };
}

function gemini(req, res, body, url) {
  if (url.endsWith(':countTokens')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ totalTokens: 100 }));
    return;
  }
  const plan = geminiPlan(body);
  if (url.endsWith(':generateContent')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(geminiResponse(plan, true)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (plan.stall) {
    res.write(`data: ${JSON.stringify(geminiResponse(plan, false))}\r\n\r\n`);
    stalled.add(res);
    return;
  }
  res.write(`data: ${JSON.stringify(geminiResponse(plan, true))}\r\n\r\n`);
  res.end();
}

// ---- server ------------------------------------------------------------------------------------

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    let body = {};
    try {
      body = raw === '' ? {} : JSON.parse(raw);
    } catch {
      body = { unparsed: raw.slice(0, 2000) };
    }
    if (requestLog) appendFileSync(requestLog, JSON.stringify({ method: req.method, url: req.url, body }) + '\n');
    const url = (req.url ?? '').split('?')[0];
    try {
      if (req.method === 'POST' && url === '/fixture/summaries-off') {
        summariesOff = true;
        res.writeHead(204);
        res.end();
      } else if (req.method === 'POST' && url.endsWith('/messages/count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: 100 }));
      } else if (req.method === 'POST' && url.endsWith('/messages')) {
        anthropic(req, res, body);
      } else if (req.method === 'POST' && url.endsWith('/responses')) {
        responses(req, res, body);
      } else if (req.method === 'POST' && url.endsWith('/opencode/v1/chat/completions')) {
        // opencode's provider is configured with this base URL (generateOpencode.mjs).
        opencodeChat(req, res, body);
      } else if (req.method === 'POST' && url.endsWith('/chat/completions')) {
        chatCompletions(req, res, body);
      } else if (req.method === 'POST' && /\/models\/[^/]+:(generateContent|streamGenerateContent|countTokens)$/.test(url)) {
        gemini(req, res, body, url);
      } else if (url.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: [], object: 'list' }));
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'not_found', message: `no route ${url}` } }));
      }
    } catch (error) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'server_error', message: String(error) } }));
    }
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  if (portFile) writeFileSync(portFile, String(port));
  process.stdout.write(`model server on 127.0.0.1:${port}\n`);
});
