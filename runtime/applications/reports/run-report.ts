/**
 * What CI reads after a run: how it ended, what it cost and how each check went. The JSON report
 * holds all of it; the JUnit report (junit-report.ts) renders the same object for test dashboards.
 */
import { join } from 'node:path';
import type { CheckResult } from '../../config/check-types.js';
import type { FlowStepRecord } from '../../runs/flow/run-flow.js';
import { writeFileAtomically } from './report-file.js';

export interface RunReportUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface RunReport {
  runId: string;
  recipe: { name: string; file?: string };
  status: string;
  exitCode: number;
  answer: string;
  structured?: unknown;
  steps: number;
  usage: RunReportUsage;
  /** US dollars, when the model profile has prices. */
  cost?: number;
  durationMs: number;
  /** ISO 8601 time the run started. */
  startedAt?: string;
  model?: string;
  exhaustedBudget?: string;
  error?: { code: string; message: string };
  /** The question a `needs-input` run stopped on, to be answered with `manus resume <run> --answer`. */
  question?: string;
  /** Workspace-relative paths of files the run wrote. */
  files?: string[];
  checks: CheckResult[];
  /** A flow's steps, each with its path and status, in the order they ended. */
  flowSteps?: FlowStepRecord[];
  /** Attempts made, the first one included. */
  attempts: number;
}

export const jsonReportFileName = 'manus-report.json';
/** Bumped when a field changes meaning or goes away; new fields do not bump it. */
export const jsonReportVersion = 1;

/** Writes `manus-report.json` into `directory` (created when missing) and returns its path. */
export async function writeJsonReport(directory: string, report: RunReport): Promise<string> {
  const file = join(directory, jsonReportFileName);
  await writeFileAtomically(file, `${JSON.stringify({ version: jsonReportVersion, ...report }, null, 2)}\n`);
  return file;
}
