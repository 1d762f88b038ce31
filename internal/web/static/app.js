// phasegate's pages: live updates (server-sent events, polling as the
// fallback) and keyboard shortcuts. Everything works without it.
(function () {
  "use strict";
  var main = document.getElementById("main");
  if (!main) { return; }
  var live = main.getAttribute("data-live");
  var POLL_MS = 30000;
  var pollTimer = null;

  function typing() {
    var el = document.activeElement;
    if (!el) { return false; }
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  // busy: the person started a form here; a refresh would lose it.
  function busy() {
    if (typing()) { return true; }
    var inputs = main.querySelectorAll("form.resolve input[type=text]");
    for (var i = 0; i < inputs.length; i++) { if (inputs[i].value !== "") { return true; } }
    return main.querySelector("form.resolve input[type=radio]:checked") !== null;
  }

  function note(text) {
    var n = main.querySelector(".live-note");
    if (n) { n.textContent = text; n.hidden = false; }
  }

  // refresh re-fetches this page and swaps its <main>, unless a form is
  // being filled in (then it says the page changed).
  function refresh() {
    if (busy()) { note("This page changed. Reload it when you are done."); return; }
    fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) {
        if (r.redirected || !r.ok) { throw new Error("status " + r.status); }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var next = doc.getElementById("main");
        if (!next || busy()) { return; }
        var y = window.scrollY;
        main.replaceChildren.apply(main, Array.prototype.slice.call(next.childNodes).map(function (n) { return document.importNode(n, true); }));
        window.scrollTo(0, y);
        current = -1;
      })
      .catch(function () { note("This page may be out of date. Reload it."); });
  }

  function relevant(ev) {
    if (live === "inbox") { return true; }
    var repo = main.getAttribute("data-repo");
    if (ev.repo !== repo) { return false; }
    if (live === "issue") { return String(ev.issue || "") === main.getAttribute("data-issue") || !ev.issue; }
    if (live === "commit") { return ev.sha === main.getAttribute("data-sha") || !!ev.issue; }
    return false;
  }

  // stream says how this page learns of changes, on <main data-stream>:
  // connecting, open (server-sent events) or polling.
  function stream(state) { main.setAttribute("data-stream", state); }

  function poll() {
    stream("polling");
    if (pollTimer === null) { pollTimer = setInterval(refresh, POLL_MS); }
  }

  if (live) {
    if (window.EventSource) {
      stream("connecting");
      var es = new EventSource("/events");
      es.onopen = function () { stream("open"); };
      es.addEventListener("change", function (e) {
        var ev;
        try { ev = JSON.parse(e.data); } catch (err) { return; }
        if (relevant(ev)) { refresh(); }
      });
      es.onerror = function () {
        // Closed for good (401, 429, the session ended): poll instead;
        // else the browser reconnects by itself.
        if (es.readyState === EventSource.CLOSED) { poll(); } else { stream("connecting"); }
      };
    } else {
      poll();
    }
  }

  // An avatar that does not load (GitHub's avatars out of reach) is left
  // out rather than shown broken.
  Array.prototype.forEach.call(document.querySelectorAll(".who img"), function (img) {
    function gone() { img.hidden = true; }
    if (img.complete && img.naturalWidth === 0) { gone(); } else { img.addEventListener("error", gone); }
  });

  // Keyboard shortcuts.
  var current = -1;
  function decisions() { return main.querySelectorAll("[data-decision]"); }
  function move(step) {
    var list = decisions();
    if (list.length === 0) { return; }
    if (current >= 0 && current < list.length) {
      list[current].classList.remove("current");
      list[current].removeAttribute("aria-current");
    }
    current = Math.max(0, Math.min(list.length - 1, current + step));
    var el = list[current];
    el.classList.add("current");
    el.setAttribute("aria-current", "true");
    var a = el.querySelector("a.open");
    if (a) { a.focus(); } else { el.scrollIntoView({ block: "nearest" }); }
  }
  function open() {
    var list = decisions();
    if (current < 0 || current >= list.length) { return; }
    var a = list[current].querySelector("a.open");
    if (a) { a.click(); }
  }
  function pick(letter) {
    var list = decisions();
    var scope = (current >= 0 && current < list.length) ? list[current] : main;
    var radios = scope.querySelectorAll("input[type=radio][data-initial]");
    var want = letter === "a" ? "approve" : letter === "r" ? "reject" : null;
    var chosen = null;
    for (var i = 0; i < radios.length && !chosen; i++) { if (want && radios[i].value === want) { chosen = radios[i]; } }
    for (var j = 0; j < radios.length && !chosen; j++) { if (radios[j].getAttribute("data-initial") === letter) { chosen = radios[j]; } }
    if (chosen) { chosen.checked = true; chosen.focus(); }
  }
  function toggleHelp() {
    var h = document.getElementById("help");
    if (h) { h.hidden = !h.hidden; }
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (typing()) {
      if (e.key === "Escape" && document.activeElement) { document.activeElement.blur(); }
      return;
    }
    switch (e.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "o": open(); break;
      case "Enter":
        if (document.activeElement === document.body || document.activeElement === main) { open(); } else { return; }
        break;
      case "/":
        var f = document.querySelector("[data-filter]");
        if (!f) { return; }
        f.focus();
        break;
      case "?": toggleHelp(); break;
      case "Escape":
        var h = document.getElementById("help");
        if (h && !h.hidden) { h.hidden = true; } else { return; }
        break;
      default:
        if (/^[a-z]$/.test(e.key) && main.querySelector("input[type=radio][data-initial]")) { pick(e.key); } else { return; }
    }
    e.preventDefault();
  });
})();
