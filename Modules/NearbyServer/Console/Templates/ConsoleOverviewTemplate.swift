/// The overview: the project's devices and the server's figures (those of `/metrics`).
enum ConsoleOverviewTemplate {
  static let text = """
    <h1>Overview</h1>
    <ul class="figures">
    <li>Devices seen in the last minute<strong>{{devicesMinute}}</strong></li>
    <li>Devices seen in the last hour<strong>{{devicesHour}}</strong></li>
    <li>Reports per second<strong>{{reportsPerSecond}}</strong><span class="hint">{{reportsTotal}} since start</span></li>
    <li>Events per second<strong>{{eventsPerSecond}}</strong><span class="hint">{{eventsTotal}} streamed since start</span></li>
    <li>Open event streams<strong>{{openStreams}}</strong></li>
    <li>Database<strong>{{database}}</strong><span class="hint">{{databaseDetail}}</span></li>
    </ul>
    <p class="hint">Devices are your project's; the other figures are this server instance's, as <a href="/metrics">/metrics</a> gives them. Rates are since the last time this page was loaded{{#since}} ({{since}} s ago){{/since}}.</p>
    """
}
