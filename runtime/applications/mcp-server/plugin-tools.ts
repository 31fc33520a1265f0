/**
 * Plugin tools served as they are: loaded by the kernel's loader from the folders a run uses (the
 * package's plugins, ./plugins, and any extra folder), each call run with a tool context from the
 * connection's session. A failure inside a tool is an error result, as it is for the model in a run.
 */
import { resolve } from 'node:path';
import { pluginFoldersFor } from '../../runs/recipe/resolve-recipe.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import { ConfigError, type Diagnostic } from '../../contract/errors.js';
import { kernelTools } from '../../kernel/plugin-loading/kernel-tools.js';
import { loadPluginFolders } from '../../kernel/plugin-loading/load-plugins.js';
import type { AnyToolDefinition, ToolContext, ToolResult } from '../../contract/tool.js';
import { validateToolArguments } from '../../kernel/tool-arguments.js';
import { errorContent, toolResultContent } from './result-content.js';
import type { ServedCall, ServedTool } from './served-tool.js';

export async function loadPluginTools(names: readonly string[], options: { cwd: string; pluginFolders: readonly string[] }): Promise<ServedTool[]> {
  if (names.length === 0) return [];
  const folders = [...pluginFoldersFor(options.cwd, undefined, names), ...options.pluginFolders.map((folder) => ({ path: resolve(options.cwd, folder) }))];
  const loaded = await loadPluginFolders(folders, { checkSchemas: true });
  const diagnostics: Diagnostic[] = loaded.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
  const available = [...loaded.tools.keys(), ...(loaded.unloadedNames ?? [])].filter((name) => !isKernelTool(name));
  const served: ServedTool[] = [];
  for (const name of names) {
    const tool = loaded.tools.get(name)?.tool;
    if (tool && !isKernelTool(name)) served.push(servedPluginTool(tool, calledToolsOf(tool, loaded.tools)));
    else diagnostics.push({ severity: 'error', message: `--tools ${name}: no plugin defines a tool '${name}' that can be served${didYouMean(name, available)}; tools: ${available.sort().join(', ')}`, location: { file: options.cwd } });
  }
  if (diagnostics.length > 0) throw new ConfigError(diagnostics);
  return served;
}

/** The kernel's own tools end a run; outside one they mean nothing. */
function isKernelTool(name: string): boolean {
  return kernelTools.some((tool) => tool.name === name);
}

/** The tools a served tool calls (its `calls`), which the loader loaded with it. */
function calledToolsOf(tool: AnyToolDefinition, loaded: ReadonlyMap<string, { tool: AnyToolDefinition }>): Map<string, AnyToolDefinition> {
  return new Map((tool.calls ?? []).flatMap((name) => {
    const called = loaded.get(name)?.tool;
    return called ? [[name, called] as const] : [];
  }));
}

function servedPluginTool(tool: AnyToolDefinition, calledTools: ReadonlyMap<string, AnyToolDefinition>): ServedTool {
  return {
    name: tool.name,
    // An MCP client lists a tool once and has no first result to carry the guide: it goes with the description.
    description: tool.guide ? `${tool.description}\n\n${tool.guide}` : tool.description,
    inputSchema: tool.parameters,
    call: (input, call) => callPluginTool(tool, calledTools, input, call),
  };
}

/** A served tool's calls to the tools it lists in `calls`, each with its own settings and schema check. */
function withToolCalls(context: ToolContext, tool: AnyToolDefinition, calledTools: ReadonlyMap<string, AnyToolDefinition>, call: ServedCall): ToolContext {
  if (calledTools.size === 0) return context;
  return {
    ...context,
    callTool: async (name, input) => {
      const called = tool.calls?.includes(name) ? calledTools.get(name) : undefined;
      if (!called) throw new Error(`the tool '${tool.name}' cannot call '${name}': it may call only the tools its 'calls' lists that are loaded (${[...calledTools.keys()].join(', ')})`);
      const problems = validateToolArguments(called, input);
      if (problems.length > 0) return { content: `Invalid arguments for '${name}': ${problems.join('; ')}`, isError: true };
      try {
        const value = await called.execute(input, await call.session().contextFor(name, call.signal));
        return typeof value === 'string' ? { content: value } : value;
      } catch (error) {
        if (call.signal.aborted) throw error;
        return { content: `Error: ${error instanceof Error ? error.message : String(error)}`, isError: true };
      }
    },
  };
}

async function callPluginTool(tool: AnyToolDefinition, calledTools: ReadonlyMap<string, AnyToolDefinition>, input: Record<string, unknown>, call: ServedCall) {
  const session = call.session();
  const context = withToolCalls(await session.contextFor(tool.name, call.signal), tool, calledTools, call);
  const started = performance.now();
  session.record('tool-call-start', { callId: context.callId, tool: tool.name, arguments: input });
  let result: ToolResult;
  try {
    // A tool that ignores its signal must not keep a cancelled call's answer waiting.
    const value = await Promise.race([Promise.resolve().then(() => tool.execute(input, context)), rejectOnAbort(call.signal)]);
    result = typeof value === 'string' ? { content: value } : value;
    if (!result || typeof result.content !== 'string') result = { content: 'Error: the tool returned no text result', isError: true };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    session.record('tool-error', { callId: context.callId, tool: tool.name, message, stack: error instanceof Error ? error.stack : undefined });
    result = { content: `Error: ${message}`, isError: true };
  }
  const content = session.redact(result.content);
  session.record('tool-call-end', {
    callId: context.callId,
    tool: tool.name,
    isError: result.isError === true,
    content,
    files: result.files,
    images: result.images?.length,
    durationMs: Math.round(performance.now() - started),
  });
  return call.signal.aborted ? errorContent('cancelled') : toolResultContent({ ...result, content });
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
