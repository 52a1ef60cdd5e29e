// Tables the build writes as plain Markdown (a chapter's own table, /bench's machines and index
// tables, the verdicts page, the after-bench page) get the same phone layout as the figure tables
// (benchsite/templates/table.html marks those itself): a table of four or more columns is marked
// data-cards and each cell labelled with its column's name, so under 45em bench.css shows one card a
// row and no column (a ratio, a verdict, "vs the reference") is hidden off the screen's edge.
// Without JavaScript such a table scrolls sideways in Material's box, as before. The lesson's
// output tables are left alone: they scroll inside their own shaded output box; so is a table the
// build marks data-columns (the verdict rules' simulated rates, templates/verdict_rates_by_rule.html),
// whose rows are compared down each column, which a card a row would take apart: it stays a table,
// in a shaded box that scrolls if it must.
(function () {
  function label(table) {
    var heads = table.querySelectorAll("thead th");
    if (heads.length < 4 || table.hasAttribute("data-cards") || table.hasAttribute("data-columns") ||
        table.closest(".jupyter-wrapper")) return;
    var names = Array.prototype.map.call(heads, function (th) { return th.textContent.trim(); });
    table.setAttribute("data-cards", "");
    table.querySelectorAll("tbody tr").forEach(function (row) {
      Array.prototype.forEach.call(row.children, function (cell, i) {
        if (i === 0) cell.setAttribute("data-title", "");
        else if (!cell.hasAttribute("data-label")) cell.setAttribute("data-label", names[i] || "");
      });
    });
  }
  function all() { document.querySelectorAll(".md-typeset table").forEach(label); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", all);
  else all();
})();
