/** The reports' styles, inlined into every page. */
export const pageStyles = `
:root { color-scheme: light; --ink: #1d2430; --muted: #5d6878; --line: #d9dee6; --panel: #f6f8fa; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --run: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 14px; margin: 12px 0 4px; }
a { color: var(--run); }
pre { margin: 4px 0; padding: 8px; background: var(--panel); border: 1px solid var(--line); border-radius: 4px; white-space: pre-wrap; overflow-wrap: anywhere; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; max-height: 480px; overflow: auto; }
nav.sections { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0 0; font-size: 13px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.status { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; background: var(--muted); vertical-align: middle; }
.status-success, .status-passed { background: var(--ok); }
.status-failure, .status-failed, .status-checks-failed, .status-stuck, .status-provider-failed, .status-permission-denied, .status-error { background: var(--bad); }
.status-budget-exhausted, .status-needs-input, .status-interrupted, .status-incomplete, .status-stopped, .status-skipped { background: var(--warn); }
.status-running, .status-pending { background: var(--run); }
.answer { border-left: 4px solid var(--ok); }
.answer.failed { border-left-color: var(--bad); }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
figure.chart { margin: 0; padding: 8px; border: 1px solid var(--line); border-radius: 4px; }
figure.chart svg { max-width: 100%; height: auto; display: block; }
figure.chart figcaption { color: var(--muted); font-size: 12px; }
ol.timeline { list-style: none; padding: 0; margin: 0; }
li.step { border: 1px solid var(--line); border-radius: 4px; margin: 0 0 8px; padding: 8px 12px; content-visibility: auto; contain-intrinsic-size: auto 120px; }
li.step.ending-stuck, li.step.ending-budget-exhausted, li.step.ending-interrupted { border-color: var(--warn); }
.step-head { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: baseline; }
.step-number { font-weight: 700; }
.step-path { font-family: ui-monospace, monospace; font-size: 12px; background: var(--panel); padding: 0 4px; border-radius: 3px; }
.figure-label { color: var(--muted); font-size: 12px; }
.assistant { white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
details.tool-call { border: 1px solid var(--line); border-radius: 4px; margin: 6px 0; padding: 4px 8px; }
details.tool-call.tool-error { border-color: var(--bad); }
details.tool-call > summary { cursor: pointer; display: flex; gap: 10px; align-items: baseline; list-style: none; }
details.tool-call > summary::-webkit-details-marker { display: none; }
details.tool-call > summary::before { content: "\\25B8"; color: var(--muted); }
details.tool-call[open] > summary::before { content: "\\25BE"; }
.tool-name { font-weight: 600; font-family: ui-monospace, monospace; }
.tool-outcome-error { color: var(--bad); font-weight: 600; }
.tool-outcome-ok { color: var(--ok); }
.tool-preview { color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; flex: 1; }
.note { color: var(--warn); font-size: 13px; white-space: pre-wrap; }
figure.screenshot { margin: 6px 0; }
figure.screenshot img { max-width: 100%; max-height: 420px; border: 1px solid var(--line); border-radius: 4px; }
figure.screenshot figcaption { color: var(--muted); font-size: 12px; }
figure.file-image { display: inline-block; margin: 6px 12px 6px 0; vertical-align: top; }
figure.file-image img { max-width: 100%; max-height: 480px; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
figure.file-image figcaption { color: var(--muted); font-size: 12px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); white-space: nowrap; }
th[data-sort] { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
tr.check-failed td { color: var(--bad); }
tr.check-failed td:first-child { border-left: 4px solid var(--bad); }
tr.check-passed td:first-child { border-left: 4px solid var(--ok); }
.filters { display: flex; gap: 8px; margin: 8px 0; }
.filters input { flex: 1; max-width: 420px; padding: 4px 8px; }
.flow-node { border: 1px solid var(--line); border-left: 4px solid var(--muted); border-radius: 4px; padding: 6px 8px; margin: 4px 0; background: #fff; min-width: 200px; }
.flow-node.flow-success { border-left-color: var(--ok); }
.flow-node.flow-failure, .flow-node.flow-stuck { border-left-color: var(--bad); }
.flow-node.flow-running { border-left-color: var(--run); }
.flow-node.flow-budget-exhausted, .flow-node.flow-interrupted, .flow-node.flow-stopped { border-left-color: var(--warn); }
.flow-children { display: flex; flex-direction: column; gap: 4px; margin-left: 16px; }
.flow-children.parallel { flex-direction: row; flex-wrap: wrap; align-items: flex-start; }
.flow-reason { color: var(--bad); font-size: 12px; white-space: pre-wrap; }
.replan { font-size: 11px; font-weight: 700; color: var(--warn); text-transform: uppercase; }
.muted { color: var(--muted); }
@media print { li.step { content-visibility: visible; } }
.live { color: var(--run); font-weight: 600; }
`;
