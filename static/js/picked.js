// picked.js: the seats best available just found. The message that names them carries
// their element ids (data-picked); the server marks them with the class "picked", and
// this script keeps that mark on them alone (the live stream replaces seats with a
// rendering without it), and scrolls them into view once per answer. Without it the
// page still marks them, and its address's fragment scrolls to the first.
// No eval, no inline script or style: it runs under the page's strict CSP.
(function () {
  "use strict";
  var shown = null; // the data-picked value last scrolled to

  function mark() {
    var msg = document.querySelector("#seat-message [data-picked]");
    var ids = msg ? msg.getAttribute("data-picked").split(" ") : [];
    var want = {};
    for (var i = 0; i < ids.length; i++) if (ids[i]) want[ids[i]] = true;
    var old = document.querySelectorAll(".seat.picked");
    for (var j = 0; j < old.length; j++) if (!want[old[j].id]) old[j].classList.remove("picked");
    var first = null;
    for (var id in want) {
      var g = document.getElementById(id);
      if (!g) continue;
      g.classList.add("picked");
      if (!first) first = g;
    }
    var key = msg ? msg.getAttribute("data-picked") : null;
    if (first && key !== shown) {
      shown = key;
      first.scrollIntoView({ block: "center", inline: "center" });
    }
  }

  var pending = false;
  function soon() {
    if (!pending) {
      pending = true;
      requestAnimationFrame(function () { pending = false; mark(); });
    }
  }
  document.addEventListener("htmx:afterSettle", soon);
  document.addEventListener("htmx:oobAfterSwap", soon);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mark);
  else mark();
})();
