/**
 * An MCP tool result as the loop takes it: text as text, images as images (shown to vision
 * profiles only, by the loop), embedded resources and structured content written out, and
 * `isError` kept, so the model sees the failure and the run goes on.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolImage, ToolResult } from '../../contract/tool.js';

const imageTypes = new Set<string>(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

export function toToolResult(result: CallToolResult): ToolResult {
  const texts: string[] = [];
  const images: ToolImage[] = [];
  for (const part of result.content ?? []) {
    switch (part.type) {
      case 'text':
        texts.push(part.text);
        break;
      case 'image':
        if (imageTypes.has(part.mimeType)) images.push({ data: part.data, mimeType: part.mimeType as ToolImage['mimeType'] });
        else texts.push(`[an image of type ${part.mimeType} that cannot be shown]`);
        break;
      case 'audio':
        texts.push(`[audio of type ${part.mimeType} that cannot be shown]`);
        break;
      case 'resource': {
        const resource = part.resource;
        if ('text' in resource && typeof resource.text === 'string') texts.push(`[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}]\n${resource.text}`);
        else texts.push(`[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}: ${Buffer.byteLength(String((resource as { blob?: string }).blob ?? ''), 'base64')} bytes of binary content, not shown]`);
        break;
      }
      case 'resource_link':
        texts.push(`[resource link ${part.uri}${part.name ? ` (${part.name})` : ''}${part.description ? `: ${part.description}` : ''}]`);
        break;
    }
  }
  if (result.structuredContent !== undefined && !texts.some((text) => sameJson(text, result.structuredContent))) {
    texts.push(`Structured content:\n${JSON.stringify(result.structuredContent, null, 2)}`);
  }
  if (images.length > 0) texts.push(`[${images.length} image(s) attached]`);
  return {
    content: texts.join('\n') || (result.isError ? 'Error: the tool failed without saying why' : '(no content)'),
    ...(result.isError ? { isError: true } : {}),
    ...(images.length > 0 ? { images } : {}),
  };
}

/** Servers are asked to repeat structured content as JSON text; it is then not written twice. */
function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
