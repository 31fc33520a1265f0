/**
 * The reports' own script, inlined into every page: sorting and filtering tables, and opening or
 * closing every tool call at once. It reads only the page and changes only how it is shown.
 */
export const pageScript = `
(function () {
  function cellValue(row, column, numeric) {
    var cell = row.children[column];
    var value = cell ? (cell.getAttribute('data-value') || cell.textContent || '') : '';
    return numeric ? Number(value) || 0 : value.toLowerCase();
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th[data-sort]').forEach(function (header, column) {
      header.addEventListener('click', function () {
        var numeric = header.getAttribute('data-sort') === 'number';
        var ascending = header.getAttribute('aria-sort') !== 'ascending';
        table.querySelectorAll('th[aria-sort]').forEach(function (other) { other.removeAttribute('aria-sort'); });
        header.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var index = Array.prototype.indexOf.call(header.parentNode.children, header);
        rows.sort(function (first, second) {
          var a = cellValue(first, index, numeric), b = cellValue(second, index, numeric);
          return (a < b ? -1 : a > b ? 1 : 0) * (ascending ? 1 : -1);
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
  document.querySelectorAll('[data-filter-for]').forEach(function (control) {
    var table = document.getElementById(control.getAttribute('data-filter-for'));
    if (!table) return;
    var controls = document.querySelectorAll('[data-filter-for="' + table.id + '"]');
    function apply() {
      var text = '', status = '';
      controls.forEach(function (each) {
        if (each.tagName === 'SELECT') status = each.value; else text = each.value.trim().toLowerCase();
      });
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var visible = (!status || row.getAttribute('data-status') === status) && (!text || row.textContent.toLowerCase().indexOf(text) >= 0);
        row.hidden = !visible;
        if (visible) shown += 1;
      });
      var counter = document.querySelector('[data-shown-for="' + table.id + '"]');
      if (counter) counter.textContent = String(shown);
    }
    control.addEventListener('input', apply);
  });
  var stepFilter = document.querySelector('[data-filter-steps]');
  var errorsOnly = document.querySelector('[data-errors-only]');
  function filterSteps() {
    var text = stepFilter ? stepFilter.value.trim().toLowerCase() : '';
    var errors = errorsOnly ? errorsOnly.checked : false;
    document.querySelectorAll('li.step').forEach(function (step) {
      step.hidden = (errors && !step.hasAttribute('data-error')) || (text !== '' && step.textContent.toLowerCase().indexOf(text) < 0);
    });
  }
  if (stepFilter) stepFilter.addEventListener('input', filterSteps);
  if (errorsOnly) errorsOnly.addEventListener('change', filterSteps);
  document.querySelectorAll('button[data-details]').forEach(function (button) {
    button.addEventListener('click', function () {
      var open = button.getAttribute('data-details') === 'open';
      document.querySelectorAll('details.tool-call').forEach(function (details) { details.open = open; });
    });
  });
})();
`;
