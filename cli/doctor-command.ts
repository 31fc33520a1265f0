/** `manus doctor`: what this machine lacks for the runtime and its tools, and how to install it. */
import { formatDiagnostic } from '../runtime/contract/errors.js';
import { runDoctor, type DoctorEntry } from '../runtime/applications/doctor/run-doctor.js';
import { ExitCode } from './exit-codes.js';

export interface DoctorCommandOptions {
  agent?: string;
  json?: boolean;
}

export async function doctorCommand(options: DoctorCommandOptions): Promise<number> {
  const report = await runDoctor({ cwd: process.cwd(), environment: process.env, agent: options.agent });
  if (options.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    for (const diagnostic of report.diagnostics) process.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
    const width = Math.max(...report.findings.map((finding) => finding.check.length));
    for (const finding of report.findings) process.stdout.write(`${findingLines(finding, width)}\n`);
    const missing = report.findings.filter((finding) => finding.status === 'missing').length;
    process.stdout.write(report.ok ? 'Everything needed is here.\n' : `${missing} needed ${missing === 1 ? 'thing is' : 'things are'} missing.\n`);
  }
  return report.ok ? ExitCode.success : ExitCode.setupIncomplete;
}

function findingLines(finding: DoctorEntry, width: number): string {
  const line = `${finding.status.padEnd(7)} ${finding.check.padEnd(width)}  ${finding.detail}`;
  return finding.fix && finding.status !== 'ok' ? `${line}\n${' '.repeat(width + 10)}fix: ${finding.fix}` : line;
}
