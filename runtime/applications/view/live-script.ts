/**
 * The script a served page of a run in progress runs: it listens to the server's events stream
 * and puts each step, the header, the flow tree and the plans in place as they change, then
 * reloads the page once the run ends, for the charts and checks. What it receives is HTML the
 * server rendered and escaped; the page's policy lets no script in it run.
 */

/** A string as a script literal that cannot end the script element it is in. */
function scriptString(text: string): string {
  return JSON.stringify(text).replace(/</g, '\\u003c');
}
export function liveRunScript(eventsUrl: string): string {
  return `
(function () {
  var source = new EventSource(${scriptString(eventsUrl)});
  function fragment(html) {
    var holder = document.createElement('template');
    holder.innerHTML = html;
    return holder.content;
  }
  function replaceInside(id, html) {
    var element = document.getElementById(id);
    if (!element) { source.close(); location.reload(); return; }
    element.replaceChildren(fragment(html));
  }
  source.addEventListener('step', function (message) {
    var data = JSON.parse(message.data);
    var list = document.getElementById('steps');
    var node = fragment(data.html).firstElementChild;
    var existing = document.getElementById('step-' + data.index);
    if (existing) existing.replaceWith(node); else if (list) list.appendChild(node);
    var empty = document.getElementById('no-steps');
    if (empty) empty.remove();
  });
  source.addEventListener('header', function (message) {
    replaceInside('run-header', JSON.parse(message.data).html);
    var count = document.getElementById('timeline-count');
    var steps = document.getElementById('run-steps');
    if (count && steps) count.textContent = steps.textContent;
  });
  source.addEventListener('flow', function (message) { replaceInside('flow-tree', JSON.parse(message.data).html); });
  source.addEventListener('plans', function (message) { replaceInside('plans', JSON.parse(message.data).html); });
  source.addEventListener('end', function () { source.close(); location.reload(); });
  // As formatDuration writes it, for the time since the run started.
  function duration(milliseconds) {
    if (milliseconds < 1000) return Math.round(milliseconds) + ' ms';
    var total = milliseconds / 1000;
    if (total < 60) return total.toFixed(1) + ' s';
    var seconds = Math.floor(total % 60), minutes = Math.floor(total / 60) % 60, hours = Math.floor(total / 3600);
    if (hours === 0) return minutes + ' min ' + String(seconds).padStart(2, '0') + ' s';
    return hours + ' h ' + String(minutes).padStart(2, '0') + ' min';
  }
  function tick() {
    var element = document.getElementById('run-duration');
    var started = element && Date.parse(element.getAttribute('data-started-at') || '');
    if (started) element.textContent = duration(Math.max(0, Date.now() - started));
  }
  tick();
  setInterval(tick, 1000);
})();
`;
}

/**
 * The script of a served list (the runs and batches, or a batch's items): it puts in place the
 * parts the server sends again when they change, by element id: a table's rows, or an element's
 * content. A table's filters are applied again to its new rows.
 */
export function liveListScript(eventsUrl: string): string {
  return `
(function () {
  var source = new EventSource(${scriptString(eventsUrl)});
  source.addEventListener('list', function (message) {
    var data = JSON.parse(message.data);
    Object.keys(data).forEach(function (id) {
      var element = document.getElementById(id);
      if (!element) return;
      var holder = document.createElement('template');
      if (element.tagName !== 'TABLE') {
        holder.innerHTML = data[id];
        element.replaceChildren(holder.content);
        return;
      }
      holder.innerHTML = '<table><tbody>' + data[id] + '</tbody></table>';
      element.tBodies[0].replaceChildren.apply(element.tBodies[0], Array.prototype.slice.call(holder.content.querySelector('tbody').children));
      document.querySelectorAll('[data-filter-for="' + id + '"]').forEach(function (control) { control.dispatchEvent(new Event('input')); });
    });
  });
})();
`;
}
