/// Found and lost events of the project's devices as they happen (server-sent events; the
/// script is ``ConsoleLiveScript``).
enum ConsoleLiveTemplate {
  static let text = """
    <h1>Live events</h1>
    <p id="state" role="status">Connecting…</p>
    <table>
    <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Device</th><th scope="col">Message</th></tr></thead>
    <tbody id="events"></tbody>
    </table>
    <noscript><p>This page needs JavaScript to show events as they come.</p></noscript>
    <script src="/console/live.js" defer></script>
    """
}
