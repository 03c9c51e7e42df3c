// core-audit console: says "new records — reload" when the store grows past the tree size this
// page shows, from the server's /events stream (one EventSource; the server reads the tree
// head once for all its listeners). Progressive enhancement: without JavaScript or
// EventSource the page is the same, without the notice; the page itself never changes.
"use strict";

(() => {
  const body = document.body;
  const url = body.dataset.events;
  const shown = Number(body.dataset.treeSize);
  if (!url || !Number.isInteger(shown) || !("EventSource" in window)) return;

  function say(treeSize) {
    let notice = document.getElementById("new-records");
    if (!notice) {
      notice = document.createElement("p");
      notice.id = "new-records";
      notice.className = "note new-records";
      notice.setAttribute("role", "status");
      document.getElementById("main").prepend(notice);
    }
    const reload = document.createElement("a");
    reload.href = window.location.href;
    reload.textContent = "reload";
    notice.replaceChildren(
      `New records: the store's tree size is now ${treeSize} (this page shows ${shown}) — `,
      reload);
  }

  let source = null;
  function listen() {
    source = new EventSource(url);
    source.addEventListener("tree-head", (event) => {
      let head;
      try {
        head = JSON.parse(event.data);
      } catch {
        return;
      }
      if (Number.isInteger(head.tree_size) && head.tree_size > shown) say(head.tree_size);
    });
    // The stream ended (the server stopped, or has too many listeners): listen no more rather
    // than knock every few seconds; the page is right as it is, and reloading listens again.
    source.addEventListener("error", () => source.close());
  }

  // A page kept in the back/forward cache would hold its stream (and one of the browser's few
  // connections to the server) open: closed when the page is left, opened again if it is back.
  window.addEventListener("pagehide", () => source && source.close());
  window.addEventListener("pageshow", (event) => { if (event.persisted) listen(); });
  listen();
})();
