/**
 * Images a model was shown (a browser screenshot from a context provider, an image a tool
 * returned) are kept in the run folder under `images/` and named by an `image-saved` event, so a
 * report can show what the page looked like at the step that saw it. Only what a model was shown
 * is kept: a model that takes no images is sent none, and none is written.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../contract/errors.js';
import type { ToolImage, TraceWriter } from '../contract/tool.js';

export const imagesFolderName = 'images';

/** Keeps the images shown at `step`; `source` is the context provider or `tool`. */
export type ImageRecorder = (step: number, source: string, images: readonly ToolImage[]) => void;

const extensions: Record<ToolImage['mimeType'], string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' };

export function imageRecorder(runDirectory: string, trace: TraceWriter): ImageRecorder {
  return (step, source, images) => {
    for (const image of images) {
      // Random, so the steps of a flow running at once never pick the same name.
      const file = `${imagesFolderName}/step-${step}-${randomBytes(4).toString('hex')}.${extensions[image.mimeType] ?? 'img'}`;
      const bytes = Buffer.from(image.data, 'base64');
      try {
        mkdirSync(join(runDirectory, imagesFolderName), { recursive: true });
        writeFileSync(join(runDirectory, file), bytes);
      } catch (error) {
        // A screenshot that cannot be kept costs the report a picture, never the run.
        trace.emit('run-warning', { step, message: `an image shown to the model could not be kept in the run folder: ${errorMessage(error)}` });
        continue;
      }
      trace.emit('image-saved', { step, source, file, mimeType: image.mimeType, bytes: bytes.length });
    }
  };
}
