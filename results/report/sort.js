// Sorts a table.sortable by the clicked column: numbers (a cell's
// data-key) by value, other text in natural order; a second click
// reverses the order.
(function () {
  "use strict";
  function key(td) {
    var k = td.getAttribute("data-key");
    if (k !== null && k !== "" && !isNaN(Number(k))) { return Number(k); }
    return td.textContent;
  }
  function compare(x, y) {
    if (typeof x === "number" && typeof y === "number") { return x - y; }
    return String(x).localeCompare(String(y), undefined, { numeric: true });
  }
  function sortBy(table, th, col) {
    var asc = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var c = compare(key(a.cells[col]), key(b.cells[col]));
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, col) {
      th.addEventListener("click", function () { sortBy(table, th, col); });
    });
  });
})();
