// A third-party MCP server for typed-mcp-client's peer tests: the official
// TypeScript SDK's McpServer (npm `@modelcontextprotocol/server`, pinned in
// package.json and package-lock.json beside this file) over stdio. Its tools
// ask for input with `inputRequired` (2026-07-28 MRTR; on a dated session the
// SDK turns it into server-to-client requests): a form elicitation, and a
// sampling request carried with a request state.
import { McpServer, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

// serveStdio picks the era from the opening exchange (server/discover or
// initialize) and pins one server from this factory to the connection.
function peer() {
  const server = new McpServer({ name: 'ts-peer', version: '1.0.0' }, { instructions: 'A TypeScript peer for typed-mcp-client.' });

  server.registerTool(
    'add',
    { description: 'Add two integers.', inputSchema: z.object({ a: z.number().int(), b: z.number().int() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } })
  );

  const nameSchema = z.object({ name: z.string() });
  server.registerTool('greet', { description: 'Greet someone, asking for their name first.', inputSchema: z.object({}) }, async (_args, ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'name', nameSchema);
    if (!answer) {
      return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }) } });
    }
    return { content: [{ type: 'text', text: `Hello, ${answer.name}!` }] };
  });

  server.registerTool('capital', { description: 'Ask the client model for a capital.', inputSchema: z.object({}) }, async (_args, ctx) => {
    const said = ctx.mcpReq.inputResponses?.capital;
    if (!said) {
      return inputRequired({
        inputRequests: {
          capital: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }],
            maxTokens: 20
          })
        },
        requestState: 'asked-capital'
      });
    }
    return { content: [{ type: 'text', text: `the model said ${said.content.text}` }] };
  });

  server.registerResource('readme', 'peer://readme', { description: 'The peer readme.', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'A TypeScript peer.' }]
  }));

  server.registerPrompt('review', { description: 'Review some code.', argsSchema: z.object({ code: z.string() }) }, async ({ code }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Review this code: ${code}` } }]
  }));

  return server;
}

serveStdio(peer);
