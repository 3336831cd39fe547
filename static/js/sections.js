// sections.js: on a phone, a map drawn whole with several sections shows its sections
// first (the list the server renders, views.sectionPick), then one section's seats at
// a finger's size, with the way back to all sections in the bar above the map
// (views.phoneBar). Every seat stays on the page, those of the other sections hidden:
// the live stream keeps them all current (it drops only seats that are not on the
// page), so a section shows its seats as they are now, and the list counts the seats
// left from them. The section shown is a history entry, so the phone's own Back
// returns to the list. Wide screens, and phones without the script, get the map as
// the server drew it; without the script the list's links open each section's page.
// No eval, no inline script or style: it runs under the page's strict CSP.
(function () {
  "use strict";
  var phone = window.matchMedia("(max-width: 48rem)");
  // The shown section's CSS pixels per map unit. Seats are 12 units apart: 36 px, and
  // each seat's target is 36 by 42 px; the map drawn whole has 2 (24 px apart).
  var SCALE = 3;
  var shown = ""; // the section a phone shows; "" is the list of sections
  var picked = null; // the best-available answer last followed to its section

  function byName(sel, name) {
    var els = document.querySelectorAll(sel);
    for (var i = 0; i < els.length; i++) if (els[i].getAttribute("data-section") === name) return els[i];
    return null;
  }

  // frame sets an <svg>'s viewBox and size to a box ("x y w h" in map units) at SCALE,
  // or back to the server's own when box is empty.
  function frame(svg, box) {
    if (!svg.hasAttribute("data-whole")) {
      svg.setAttribute("data-whole", [svg.getAttribute("viewBox"), svg.getAttribute("width"), svg.getAttribute("height")].join(","));
    }
    var vb, w, h;
    if (box) {
      var n = box.split(" ");
      vb = box; w = String(n[2] * SCALE); h = String(n[3] * SCALE);
    } else {
      var p = svg.getAttribute("data-whole").split(",");
      vb = p[0]; w = p[1]; h = p[2];
    }
    if (svg.getAttribute("viewBox") === vb && svg.getAttribute("width") === w) return;
    svg.setAttribute("viewBox", vb);
    svg.setAttribute("width", w);
    svg.setAttribute("height", h);
  }

  function thousands(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

  // count writes each section's seats left, as the server words it (sectionLeft).
  function count(map) {
    var left = {};
    var rows = map.querySelectorAll(".map.seats .row[data-section]");
    for (var i = 0; i < rows.length; i++) {
      var s = rows[i].getAttribute("data-section");
      left[s] = (left[s] || 0) + rows[i].querySelectorAll(".seat.avail").length;
    }
    var cs = map.querySelectorAll(".section-choice");
    for (var j = 0; j < cs.length; j++) {
      var n = left[cs[j].getAttribute("data-section")] || 0;
      var text = n > 0 ? thousands(n) + " of " + thousands(cs[j].getAttribute("data-seats")) + " seats left" : "sold out";
      var el = cs[j].querySelector(".choice-left");
      if (el && el.textContent !== text) el.textContent = text;
    }
  }

  // follow shows the section of the seats best available just found.
  function follow() {
    var msg = document.querySelector("#seat-message [data-picked]");
    var key = msg ? msg.getAttribute("data-picked") : null;
    if (!key || key === picked) return;
    picked = key;
    if (!document.getElementById("live").hasAttribute("data-phone")) return;
    var seat = document.getElementById(key.split(" ")[0]);
    var row = seat && seat.closest(".row[data-section]");
    if (row && row.getAttribute("data-section") !== shown) show(row.getAttribute("data-section"), true);
  }

  // apply draws the page for the screen it is on and the section chosen.
  function apply() {
    var live = document.getElementById("live");
    var map = document.getElementById("seatmap");
    if (!live || !map) return;
    var on = phone.matches && !!map.querySelector(".section-pick");
    var choice = on && shown ? byName("#seatmap .section-choice", shown) : null;
    if (on) live.setAttribute("data-phone", choice ? "section" : "sections");
    else live.removeAttribute("data-phone");
    var parts = map.querySelectorAll("#seat-form [data-section]");
    for (var i = 0; i < parts.length; i++) {
      var off = !!choice && parts[i].getAttribute("data-section") !== shown;
      if (parts[i].classList.contains("off") !== off) parts[i].classList.toggle("off", off);
    }
    var svg = map.querySelector(".map.seats"), rail = map.querySelector(".row-rail");
    if (svg) frame(svg, choice ? choice.getAttribute("data-viewbox") : "");
    if (rail) frame(rail, choice ? choice.getAttribute("data-railbox") : "");
    var back = live.querySelector(".sections-back"), name = live.querySelector(".shown-name");
    if (back) back.hidden = !choice;
    if (name) name.textContent = choice ? "Section " + shown : "";
    if (on) count(map);
  }

  // show shows one section (or, with "", the list) and makes it a history entry.
  function show(section, push) {
    shown = section;
    if (push) history.pushState({ section: section }, "");
    apply();
    document.dispatchEvent(new Event("sections:shown"));
    var scroller = document.querySelector("#seatmap .map-scroll");
    if (scroller) scroller.scrollLeft = 0;
    var map = document.getElementById("seatmap");
    if (map) map.scrollIntoView({ block: "start" });
  }

  document.addEventListener("click", function (e) {
    var choice = e.target.closest && e.target.closest("#seatmap .section-choice");
    if (choice && document.getElementById("live").hasAttribute("data-phone")) {
      e.preventDefault();
      show(choice.getAttribute("data-section"), true);
      return;
    }
    if (e.target.closest && e.target.closest(".sections-back")) {
      if (history.state && history.state.section) history.back();
      else show("", false);
    }
  });
  window.addEventListener("popstate", function (e) {
    show(e.state && e.state.section ? e.state.section : "", false);
  });
  if (phone.addEventListener) phone.addEventListener("change", apply);

  var pending = false;
  function soon() {
    if (!pending) {
      pending = true;
      requestAnimationFrame(function () { pending = false; apply(); follow(); });
    }
  }
  document.addEventListener("htmx:afterSettle", soon);
  document.addEventListener("htmx:oobAfterSwap", soon);
  function start() { apply(); follow(); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
