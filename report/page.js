// Renders each trial table from its JSON, a page of rows at a time, sorted
// by the column last clicked (again: the other way).
(function () {
  "use strict";
  var PAGE = 100;
  function cell(v) { return v === null || v === undefined ? "" : String(v); }
  // compare orders a before b in direction dir (1 or -1), empty cells
  // last whichever the direction.
  function compare(num, dir, a, b) {
    var na = a === null || a === undefined || a === "", nb = b === null || b === undefined || b === "";
    if (na || nb) { return na === nb ? 0 : (na ? 1 : -1); }
    if (num) { return dir * (a - b); }
    return dir * (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0);
  }
  function setup(host) {
    var src = document.getElementById(host.getAttribute("data-src"));
    var d = JSON.parse(src.textContent);
    var rows = d.rows.slice(), col = 0, dir = 1, page = 0;
    var statusCol = d.cols.indexOf("status");
    var table = document.createElement("table");
    var thead = table.createTHead(), hr = thead.insertRow(), tbody = table.createTBody();
    var pager = document.createElement("div"), prev = document.createElement("button"), next = document.createElement("button"), info = document.createElement("span");
    pager.className = "pager"; prev.textContent = "previous"; next.textContent = "next";
    pager.appendChild(prev); pager.appendChild(next); pager.appendChild(info);
    d.cols.forEach(function (name, i) {
      var th = document.createElement("th");
      th.textContent = name;
      th.addEventListener("click", function () {
        dir = col === i ? -dir : 1; col = i; page = 0;
        rows.sort(function (a, b) { return compare(d.num[i], dir, a[i], b[i]); });
        draw();
      });
      hr.appendChild(th);
    });
    prev.addEventListener("click", function () { if (page > 0) { page--; draw(); } });
    next.addEventListener("click", function () { if ((page + 1) * PAGE < rows.length) { page++; draw(); } });
    function draw() {
      var ths = hr.children;
      for (var i = 0; i < ths.length; i++) { ths[i].className = i === col ? (dir > 0 ? "sorted-asc" : "sorted-desc") : ""; }
      var frag = document.createDocumentFragment();
      var end = Math.min(rows.length, (page + 1) * PAGE);
      for (var r = page * PAGE; r < end; r++) {
        var tr = document.createElement("tr");
        for (var c = 0; c < d.cols.length; c++) {
          var td = document.createElement("td"), v = rows[r][c];
          td.textContent = c === d.at_col && v !== null ? new Date(v * 1000).toISOString().slice(0, 19).replace("T", " ") : cell(v);
          if (!d.num[c]) { td.className = "text"; }
          if (c === statusCol) { td.className = "text st-" + v; }
          tr.appendChild(td);
        }
        frag.appendChild(tr);
      }
      tbody.replaceChildren(frag);
      info.textContent = "rows " + (rows.length ? page * PAGE + 1 : 0) + "–" + end + " of " + rows.length + " (click a heading to sort)";
    }
    host.appendChild(pager);
    host.appendChild(table);
    draw();
    host.setAttribute("data-rendered", String(tbody.rows.length));
  }
  var t0 = performance.now();
  var hosts = document.querySelectorAll(".trials-table");
  for (var i = 0; i < hosts.length; i++) { setup(hosts[i]); }
  document.body.setAttribute("data-script-ms", String(Math.round(performance.now() - t0)));
  // A live page reloads itself: the same request again, and with the
  // page's no-referrer policy no Referer, so the daemon's guard lets it
  // through.
  var live = document.getElementById("live");
  if (live) { setTimeout(function () { location.reload(); }, 1000 * Number(live.getAttribute("data-refresh"))); }
})();
