/// The console's only script: it shows the live view's server-sent events as table rows
/// (`textContent`, never HTML). Served as a file so the pages' Content-Security-Policy can
/// refuse inline scripts.
enum ConsoleLiveScript {
  static let text = """
    (function () {
      var rows = document.getElementById("events"), state = document.getElementById("state");
      var source = new EventSource("/console/live/events");
      source.onopen = function () { state.textContent = "Listening for found and lost events."; };
      source.onerror = function () { state.textContent = "Disconnected; reconnecting…"; };
      function add(kind, e) {
        var d = JSON.parse(e.data), tr = document.createElement("tr");
        [d.time, kind, d.device, (d.namespace ? d.namespace + "/" : "") + d.type + " (" + d.bytes + " bytes)"].forEach(function (text) {
          var td = document.createElement("td"); td.textContent = text; tr.appendChild(td);
        });
        rows.insertBefore(tr, rows.firstChild);
        while (rows.children.length > 200) rows.removeChild(rows.lastChild);
      }
      source.addEventListener("found", function (e) { add("found", e); });
      source.addEventListener("lost", function (e) { add("lost", e); });
    })();
    """
}
