// print.js: a button marked data-print prints the page (the tickets, one to a sheet,
// by print.css). A file rather than an inline handler: the CSP allows no inline script.
(function () {
  "use strict";
  document.addEventListener("click", function (e) {
    var b = e.target && e.target.closest ? e.target.closest("[data-print]") : null;
    if (b) window.print();
  });
})();
