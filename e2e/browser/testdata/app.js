"use strict";
// The fixtures' one script, served from the page's own origin (the CSP's
// script-src 'self'): a click counter, keyboard shortcuts and an EventSource.
document.documentElement.dataset.script = "ran";

const byId = (id) => document.getElementById(id);

const inc = byId("inc");
if (inc) {
  let n = 0;
  inc.addEventListener("click", () => { n += 1; byId("count").textContent = String(n); });
}

const reason = byId("reason");
if (reason) {
  reason.addEventListener("input", () => { byId("echo").textContent = reason.value; });
}

// j / k move the selection over the list, Enter resolves the selected item,
// as the inbox's shortcuts will; never while typing in a field.
const items = Array.from(document.querySelectorAll("[data-item]"));
let selected = -1;
function select(i) {
  if (items.length === 0) return;
  selected = Math.max(0, Math.min(items.length - 1, i));
  items.forEach((el, j) => el.setAttribute("aria-current", j === selected ? "true" : "false"));
  byId("selected").textContent = items[selected].dataset.item;
}
document.addEventListener("keydown", (e) => {
  if (e.target instanceof HTMLElement && e.target.matches("input, textarea, select")) return;
  if (e.key === "j") select(selected + 1);
  else if (e.key === "k") select(selected - 1);
  else if (e.key === "Enter" && selected >= 0) byId("status").textContent = "resolved " + items[selected].dataset.item;
});

const live = byId("live");
if (live) {
  const events = new EventSource("/events");
  events.addEventListener("open", () => { byId("conn").textContent = "connected"; });
  events.addEventListener("decision", (e) => {
    const li = document.createElement("li");
    li.textContent = e.data;
    live.append(li);
  });
}
