/// The overview: the project's devices, reports, events and streams, and the database.
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
    <p class="hint">Every figure is your project's; reports, events and streams are counted by this server instance since it started. Rates are since the last time this page was loaded{{#since}} ({{since}} s ago){{/since}}.</p>
    """
}
